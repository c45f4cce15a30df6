"""A sweep member's set-up in a warm worker: from `Run(cfg)` to its first row, after a first run.

A `grok sweep` worker is one process that runs member after member (engine/sweep/pool.py), so torch
and everything imported by the first member are already loaded for the next. This times, in one
process, a first run (cold) and then `--repeats` more runs of the same preset with other seeds from
`Run(cfg, out)` to their step-0 EvalLogged (data, model, optimizer, run directory, the first
evaluation with the probes due at step 0), as wall and CPU seconds. Usage:

    python bench/bench_member_setup.py [--preset random_mul] [--repeats 5] [--threads 1] [--set k=v ...]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import torch

from engine.config import parse_set
from engine.events import EvalLogged
from engine.presets import resolve_config
from engine.run import Run


def first_row(cfg, out: str) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    run = Run(cfg, out)
    events = run.events()
    for ev in events:
        if isinstance(ev, EvalLogged):
            break
    took = time.perf_counter() - w, time.process_time() - c
    run.stop()
    for _ in events:  # let it finish its one step and close the run directory
        pass
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="random_mul")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--set", dest="sets", action="append", default=[])
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    over = {**parse_set(args.sets), "train.max_steps": "1", "train.threads": str(args.threads)}
    with tempfile.TemporaryDirectory() as out:
        cfg, _ = resolve_config(args.preset, None, over, seed=0)
        cold = first_row(cfg, out)
        warm = [first_row(resolve_config(args.preset, None, over, seed=s)[0], out) for s in range(1, args.repeats + 1)]
    walls, cpus = [w for w, _ in warm], [c for _, c in warm]
    print(f"{args.preset} {' '.join(args.sets)}: first run (cold) {cold[0]:.2f} s wall, {cold[1]:.2f} CPU s")
    print(
        f"warm member set-up to its first row: median {statistics.median(walls):.2f} s wall "
        f"(range {min(walls):.2f}-{max(walls):.2f}), {statistics.median(cpus):.2f} CPU s, {args.repeats} runs"
    )


if __name__ == "__main__":
    main()
