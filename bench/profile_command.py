"""Where a whole `grok` command spends its time: the command in this process under cProfile, every thread.

The training loop runs on its own thread (engine/loop.py `member_events`) and the run log on the main
one. Before Python 3.12 each thread gets its own profiler and the report merges them; from 3.12 on,
cProfile is built on sys.monitoring, one profiler sees every thread and a second one is refused. On a
GPU, time waiting for kernels shows up at the host's next sync (`.tolist()`, `.item()`, a copy to the
CPU).

    python bench/profile_command.py [--top 35] [--sort cumulative|tottime] [--match engine] -- \
        run --preset random_mul --device cuda --steps 3000 --out DIR -q

It prints the wall time of the command, the training steps/s from its summary.json (for `run`), and the
top functions of the merged profile (with --match, only those whose file path contains it).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import threading
import time
from pathlib import Path


def profile(argv: list[str]) -> tuple[float, pstats.Stats]:
    from grok_tui.cli import app, quiet_on_closed_pipe

    profiles: list[cProfile.Profile] = []
    thread_run = threading.Thread.run

    def run(self: threading.Thread) -> None:
        p = cProfile.Profile()
        profiles.append(p)
        p.enable()
        try:
            thread_run(self)
        finally:
            p.disable()

    per_thread = sys.version_info < (3, 12)
    if per_thread:
        threading.Thread.run = run  # type: ignore[method-assign]
    main = cProfile.Profile()
    sys.argv = ["grok", *argv]
    t = time.perf_counter()
    main.enable()
    try:
        quiet_on_closed_pipe(app)
    except SystemExit:
        pass
    finally:
        main.disable()
        threading.Thread.run = thread_run  # type: ignore[method-assign]
    wall = time.perf_counter() - t
    stats = pstats.Stats(main)
    for p in profiles:
        try:
            stats.add(p)
        except TypeError:  # a thread that never called anything
            pass
    return wall, stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=35)
    ap.add_argument("--sort", default="cumulative", choices=("cumulative", "tottime"))
    ap.add_argument("--match", default="", help="only functions whose file path contains this")
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="-- then the grok command line")
    a = ap.parse_args()
    argv = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
    wall, stats = profile(argv)
    print(f"command: grok {' '.join(argv)}")
    print(f"wall {wall:.2f} s (in this process, imports of the command included)")
    if argv[:1] == ["run"] and "--out" in argv:
        out = Path(argv[argv.index("--out") + 1])
        for s in sorted(out.glob("*/summary.json"))[-1:]:
            d = json.loads(s.read_text())
            keys = ("steps", "steps_per_s", "wall_s", "cuda_graph", "device")
            print("summary: " + ", ".join(f"{k} {d[k]}" for k in keys if k in d))
    buf = io.StringIO()
    stats.stream = buf  # type: ignore[attr-defined]
    stats.sort_stats(a.sort)
    if a.match:
        stats.print_stats(a.match, a.top)
    else:
        stats.print_stats(a.top)
    text = buf.getvalue()
    print(text[text.find("   ncalls") :] if "   ncalls" in text else text)


if __name__ == "__main__":
    main()
