"""Host time per step of the batched step (engine/many.py) with tiny members: the arithmetic is small, so
what is left is the per-step work on the host that, on a GPU, sets the pace of a launch-bound step.

Prints, per N, the optimizers stepped per step and the best wall and process-CPU ms per step over
`--reps` chunks of `--steps` steps (process CPU moves less than wall time on a loaded machine). Usage:

    python bench/bench_many_host.py [--sizes 8,32] [--steps 200] [--reps 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator

import torch

from engine.config import apply_overrides
from engine.events import Event, StepsTaken
from engine.many import ManyTrainer
from engine.presets import load_preset

TINY = {"data.p": 23, "model.d_embed": 16, "model.d_hidden": 32, "train.batch_size": 32}


def until(events: Iterator[tuple[int, Event]], step: int) -> None:
    for _, ev in events:
        if isinstance(ev, StepsTaken) and ev.step >= step:
            return


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8,32")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    over = {**TINY, "train.max_steps": 10**9, "train.eval_every": 10**9, "train.patience": 0, "train.threads": 1}
    base = apply_overrides(load_preset("adamlr_mul").config, {**over, "train.device": "cpu"})
    for n in (int(s) for s in args.sizes.split(",")):
        trainer = ManyTrainer([apply_overrides(base, {"train.seed": s}) for s in range(n)])
        events = trainer._loop()  # on this thread: the process CPU clock sees the step
        until(events, 50)  # warm-up
        wall = cpu = float("inf")
        for _ in range(args.reps):
            t, c = time.perf_counter(), time.process_time()
            until(events, trainer.step + args.steps)
            wall = min(wall, time.perf_counter() - t)
            cpu = min(cpu, time.process_time() - c)
        print(
            f"N = {n:<4} {len(trainer.opts)} optimizer(s) per step  "
            f"wall {1e3 * wall / args.steps:6.2f} ms/step  process CPU {1e3 * cpu / args.steps:6.2f} ms/step",
            flush=True,
        )


if __name__ == "__main__":
    main()
