"""The docs' SVG screenshots of the lab, driven with Textual's Pilot: `make screenshots`.

    .venv/bin/python bench/screenshots.py [--step 1000] [--out docs/screens]

- main.svg (README.md): `grok-tui --preset skewed_mul` mid-run. The real engine trains seed 0 on
  the CPU; its event stream is held after the evaluation at --step, so the screen shows the run
  in progress at that step whatever the machine's speed.
- compare.svg (docs/TUI.md): the compare view (`c`) of that live run against a `random_mul` run
  of seed 0 trained headless to the same step first.

- plateau.svg and groks.svg (README.md, "What you will see"), with `--plateau RUN_DIR --groks RUN_DIR`:
  finished runs opened with `grok-tui --open` (a `skewed_mul` run whose rare tokens plateau, and one that
  groks, e.g. `progress_mul`), each on its Training view; run from the directory holding `runs/`.

The curves, the phase markers and the step are the same on every machine (seeded runs, one
thread); the speed, elapsed time and ETA in the status bar are the machine's own. Runs are
written to a temporary directory, shown as `runs/` (the working directory is changed to it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.config.presets import load_preset
from engine.config.resolve import resolve
from engine.events import EvalLogged, Event

SIZE = (120, 36)  # columns x rows: wide enough for the paired charts, short enough for a README
HOLD_LIMIT_S = 3600.0  # the longest wait for the run to reach --step, and the longest hold


class HeldRun:
    """The engine's Run, its event stream held after the evaluation at `step` until `release`."""

    def __init__(self, run: Any, step: int) -> None:
        self.run, self.step = run, step
        self.reached, self.release = threading.Event(), threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.run, name)

    def events(self) -> Iterator[Event]:
        events = self.run.events()
        try:
            for ev in events:
                yield ev
                if isinstance(ev, EvalLogged) and ev.step >= self.step:
                    self.reached.set()
                    self.release.wait(HOLD_LIMIT_S)
                    return
        finally:
            events.close()


def train_headless(preset: str, step: int, out: Path) -> Path:
    """A seed-0 run of `preset` to `step` (then interrupted), for the compare view."""
    from engine.train.run import Run

    cfg = resolve(load_preset(preset), {"train.threads": 1}, device="cpu")
    run = Run(cfg, out)
    events = run.events()
    for ev in events:
        if isinstance(ev, EvalLogged) and ev.step >= step:
            break
    events.close()
    return Path(run.dir)


async def shoot(step: int, shots: Path, compare_dir: Path) -> None:
    from grok_tui.app import create_app
    from grok_tui.runner import make_run

    held: list[HeldRun] = []

    def factory(cfg: Any, out: Any) -> HeldRun:
        held.append(HeldRun(make_run(cfg, out), step))
        return held[-1]

    app = create_app(
        "skewed_mul",
        out="runs",
        sets=["train.threads=1", "train.device=cpu"],
        compare=[str(compare_dir)],
        run_factory=factory,
    )
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + HOLD_LIMIT_S
        while not (held and held[0].reached.is_set() and app.data.step >= step):
            if time.monotonic() > deadline:
                raise SystemExit(f"the run did not reach step {step} in {HOLD_LIMIT_S:.0f} s")
            await pilot.pause(0.2)
        app.redraw(force=True)
        await pilot.pause(1.0)
        app.save_screenshot("main.svg", str(shots))
        await pilot.press("c")
        await pilot.pause(2.0)
        app.save_screenshot("compare.svg", str(shots))
        held[0].release.set()
        await pilot.press("q")


async def shoot_open(run_dir: str, name: str, shots: Path) -> None:
    """A finished run opened in the lab (`grok-tui --open RUN_DIR`), its Training view saved as `name`."""
    from grok_tui.app import create_app

    app = create_app(open_dir=run_dir)
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 60
        while "FINISHED" not in app.status_bar.plain:
            if time.monotonic() > deadline:
                raise SystemExit(f"{run_dir}: not shown as a finished run within 60 s")
            await pilot.pause(0.2)
        app.redraw(force=True)
        await pilot.pause(1.0)
        app.save_screenshot(name, str(shots))
        await pilot.press("q")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1000, help="the step the screenshots show")
    ap.add_argument("--out", default="docs/screens", help="directory for main.svg and compare.svg")
    ap.add_argument("--plateau", help="a finished skewed_mul RUN_DIR: plateau.svg (and no other shot)")
    ap.add_argument("--groks", help="a finished RUN_DIR that reached G: groks.svg (and no other shot)")
    args = ap.parse_args()
    shots = Path(args.out).resolve()
    shots.mkdir(parents=True, exist_ok=True)
    opened = [(d, name) for d, name in ((args.plateau, "plateau.svg"), (args.groks, "groks.svg")) if d]
    if opened:
        for run_dir, name in opened:
            asyncio.run(shoot_open(run_dir, name, shots))
            print(f"wrote {shots / name} ({(shots / name).stat().st_size / 1024:.0f} KiB)")
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        compare_dir = train_headless("random_mul", args.step, Path("runs"))
        asyncio.run(shoot(args.step, shots, compare_dir))
    for name in ("main.svg", "compare.svg"):
        print(f"wrote {shots / name} ({(shots / name).stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
