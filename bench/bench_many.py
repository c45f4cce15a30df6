"""Many seeds as one batched model (engine/train/many.py): model-steps/s for N members against N = 1.

Arms alternate in one process. On a GPU the goal is ≥ 0.7·N× the single-model rate up to N = 32;
on the CPU one model already keeps the cores busy, so the figure shows the overhead. Usage:

    python bench/bench_many.py [--device cuda] [--sizes 1,8,32,128] [--steps 20] [--reps 3] [--threads 1]
"""

from __future__ import annotations

import argparse

import torch

from engine.train.bench import bench_config, engine_loop, interleave, many_loop
from engine.train.trainer import resolve_device


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--sizes", default="1,8,32")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads; 0 = auto (engine/train/threads.py)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    dev = resolve_device(args.device)
    cfg = bench_config("random_mul", str(dev), args.threads)
    sizes = [int(s) for s in args.sizes.split(",")]
    arms = {"engine": engine_loop(cfg), **{f"N={n}": many_loop(cfg, n) for n in sizes}}
    res = interleave(arms, args.steps, args.reps, warmup=10)
    print(f"random_mul on {dev}, threads {torch.get_num_threads()}, {args.reps} × {args.steps} steps per arm, medians")
    single = res["engine"].steps_per_s
    print(f"single Trainer (gathered first layer): {single:.1f} steps/s")
    base = res[f"N={sizes[0]}"].steps_per_s * sizes[0]
    for n in sizes:
        r = res[f"N={n}"].steps_per_s * n
        print(f"N = {n:<4} {r:8.1f} model-steps/s  {r / base:5.2f}x N={sizes[0]}  {r / single:5.2f}x one Trainer")


if __name__ == "__main__":
    main()
