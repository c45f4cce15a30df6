"""TUI overhead: the same preset for the same steps, headless and under the TUI (App.run_test()).

    .venv/bin/python bench/bench_tui.py --preset skewed_mul --steps 1000 --repeats 2

Runs alternate (headless, TUI, headless, TUI, ...) so drift in machine load hits both alike.
steps/s is the engine's own figure (summary.json: steps / training wall time). The TUI runs with
its real redraw timer and a 160x48 headless screen showing every chart (the "All" view).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import tempfile
import threading
import time
from pathlib import Path

from engine.config import parse_set
from engine.presets import resolve_config


def headless(cfg, out: Path) -> float:
    """Iterate Run.events() in a fresh thread, as the TUI's worker does.

    torch.set_flush_denormal is per thread, and a new thread's OpenMP team inherits it; the main
    thread's OpenMP thread exists from `import torch` on and does not. On the main thread the
    memorization plateau's subnormal weights then slow the headless loop (3x in one measurement),
    which would flatter the TUI. Same thread set-up on both sides keeps the ratio about the UI.
    """
    from engine.run import Run

    result: list[float] = []

    def loop() -> None:
        run = Run(cfg, out)
        for _ in run.events():
            pass
        result.append(float(run.summary["steps_per_s"]))

    t = threading.Thread(target=loop)
    t.start()
    t.join()
    return result[0]


async def _tui(cfg, out: Path) -> float:
    from grok_tui.app import GrokApp

    app = GrokApp(cfg, out)
    async with app.run_test(size=(160, 48)) as pilot:
        cpu0, wall0 = time.thread_time(), time.perf_counter()  # this thread is the app's (asyncio)
        while app.data.live:
            # plain sleep: pilot.pause() waits for the app to go idle, which itself costs the run
            # about 10% (measured), so it would charge the harness's polling to the UI
            await asyncio.sleep(0.2)
        ui_share = (time.thread_time() - cpu0) / (time.perf_counter() - wall0)
        draws = sum(c.draws for c in app.query("Chart"))
        await pilot.press("q")
    print(
        f"    (tui: UI thread CPU {ui_share:.1%} of one core; {draws} chart draws, "
        f"{app.deferred} put off by the CPU budget, {app.data.version} events)"
    )
    return float(app.data.summary["steps_per_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="skewed_mul")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--set", dest="sets", action="append", default=[])
    ap.add_argument(
        "--bare",
        action="store_true",
        help="a third arm: headless with every probe off, the baseline of the whole lab's cost (TUI + probes)",
    )
    args = ap.parse_args()
    sets = {"train.device": "cpu", "train.patience": 0, **parse_set(args.sets)}
    cfg, _ = resolve_config(args.preset, None, sets, steps=args.steps)
    off = {f.name: 0 for f in dataclasses.fields(cfg.probe) if f.name.endswith("_every")}
    bare_cfg = dataclasses.replace(cfg, probe=dataclasses.replace(cfg.probe, **off))
    hs, ts, bs = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        warm = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, max_steps=50))
        headless(warm, out)  # warm-up: imports, allocator, first-run costs
        for i in range(args.repeats):
            t0 = time.perf_counter()
            hs.append(headless(cfg, out))
            print(f"[{i}] headless {hs[-1]:8.1f} steps/s  ({time.perf_counter() - t0:.1f} s)", flush=True)
            t0 = time.perf_counter()
            ts.append(asyncio.run(_tui(cfg, out)))
            print(f"[{i}] tui      {ts[-1]:8.1f} steps/s  ({time.perf_counter() - t0:.1f} s)", flush=True)
            if args.bare:
                t0 = time.perf_counter()
                bs.append(headless(bare_cfg, out))
                print(f"[{i}] bare     {bs[-1]:8.1f} steps/s  ({time.perf_counter() - t0:.1f} s)", flush=True)
    h, t = statistics.mean(hs), statistics.mean(ts)
    pairs = statistics.median(b / a for a, b in zip(hs, ts, strict=True))
    print(
        f"preset {args.preset}, {args.steps} steps: headless {h:.1f} steps/s, tui {t:.1f} steps/s, "
        f"ratio {t / h:.3f} (median of per-pair ratios {pairs:.3f})"
    )
    if bs:
        b = statistics.mean(bs)
        whole = statistics.median(c / a for a, c in zip(bs, ts, strict=True))
        print(
            f"bare headless (probes off) {b:.1f} steps/s: "
            f"tui with probes / bare {t / b:.3f} (median of pairs {whole:.3f})"
        )


if __name__ == "__main__":
    main()
