"""Host syncs per training step on a GPU, by where they happen (engine/hostsync.py).

Builds a run of the preset on CUDA with the probes off and no evaluation inside the window, trains
`--warmup` steps on this thread, then `--steps` more with `torch.cuda.set_sync_debug_mode("warn")`,
which makes every synchronizing CUDA call raise a warning at the Python line that made it. Prints the
syncs per step, each source line with its count, and the steps/s of the same number of steps without
the debug mode (timed between two `torch.cuda.synchronize()`). The NaN check reads the losses once per
PROGRESS_EVERY steps (engine/loop.py): 1/PROGRESS_EVERY syncs per step is the floor by design.

Without CUDA it says so and exits 1; `--cpu-proxy` then counts, on the CPU, the calls that would read
back from a GPU (engine/hostsync.py's HostReads), per step. Usage:

    python bench/bench_syncs.py [--preset random_mul] [--steps 200] [--warmup 20] [--members 1] [--set k=v ...]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any

import torch

from engine.config import apply_overrides, parse_set
from engine.hostsync import HostReads
from engine.loop import PROGRESS_EVERY, TrainLoop
from engine.many import ManyTrainer
from engine.presets import resolve_config
from engine.trainer import Trainer

PROBES_OFF = {"probe.hessian_every": 0, "probe.rank_every": 0, "probe.grad_every": 0, "probe.fourier_every": 0}


def build(args: argparse.Namespace, device: str) -> TrainLoop:
    base, _ = resolve_config(preset=args.preset)
    total = args.warmup + 2 * args.steps + 10
    over: dict[str, Any] = {
        **PROBES_OFF,
        "train.device": device,
        "train.threads": 1,
        "train.max_steps": total,
        "train.eval_every": total,
        **parse_set(args.set),
    }
    cfg = apply_overrides(base, over)
    if args.members == 1:
        return Trainer(cfg)
    return ManyTrainer([apply_overrides(cfg, {"train.seed": cfg.train.seed + i}) for i in range(args.members)])


def advance(tr: TrainLoop, events: Iterator[Any], to_step: int) -> None:
    while tr.step < to_step:
        next(events)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="random_mul")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--members", type=int, default=1, help="N > 1: N seeds as one stacked model (engine/many.py)")
    ap.add_argument("--cpu-proxy", action="store_true", help="without CUDA: count the would-be host reads on the CPU")
    ap.add_argument("--set", action="append", default=[], help="group.key=value, e.g. train.batch_size=64")
    args = ap.parse_args()

    cuda = torch.cuda.is_available()
    if not cuda and not args.cpu_proxy:
        sys.exit("bench_syncs: needs CUDA (torch.cuda.is_available() is False); --cpu-proxy counts would-be reads")
    tr = build(args, "cuda" if cuda else "cpu")
    events = tr._loop()  # this thread: the debug mode and the counting mode see the step's own calls
    advance(tr, events, args.warmup)
    start = tr.step
    print(f"preset {args.preset}, {args.members} member(s), device {tr.device}, steps {start}..{start + args.steps}")

    if not cuda:
        mode = HostReads()
        with mode:
            advance(tr, events, start + args.steps)
        per_step = sum(mode.counts.values()) / args.steps
        print(f"CPU proxy: {per_step:.3f} would-be host reads per step: {dict(mode.counts)}")
        print(f"(the NaN check's floor: {1 / PROGRESS_EVERY:.3f} per step; the proxy also counts reads of host-side")
        print(" tensors, such as the sampler's CPU weights at an epoch boundary, which never wait on a GPU)")
        return

    torch.cuda.synchronize()
    t = time.perf_counter()
    advance(tr, events, start + args.steps)
    torch.cuda.synchronize()
    sps = args.steps / (time.perf_counter() - t)

    start = tr.step
    where: Counter[str] = Counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            advance(tr, events, start + args.steps)
        finally:
            torch.cuda.set_sync_debug_mode(0)
    for w in caught:
        if "synchroniz" in str(w.message):
            where[f"{w.filename}:{w.lineno}"] += 1
    total = sum(where.values())
    print(f"{args.steps} steps without the debug mode: {sps:.0f} steps/s")
    print(f"{total / args.steps:.3f} syncs per step ({total} in {args.steps} steps; floor {1 / PROGRESS_EVERY:.3f})")
    for line, n in where.most_common():
        print(f"  {n:6d}  {line}")


if __name__ == "__main__":
    main()
