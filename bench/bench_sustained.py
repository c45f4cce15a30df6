"""Sustained throughput: steps/s over steps 0–1k against 2k–6k of `random_mul` at lr 1e-3, engine vs plain loops.

The plain loop (DataLoader, Adam, PyTorch defaults) slows down in the memorization plateau because
weights and Adam moments decay into subnormal floats; the same loop with `torch.set_flush_denormal(True)`
shows that flushing them is the fix, and the engine (which sets it in `Trainer.__init__`) keeps its speed.
The arms train in alternating chunks of 100 steps in one process. Usage:

    python bench/bench_sustained.py [--steps 6000] [--threads 1] [--arms plain,plain_flush,engine]
"""

from __future__ import annotations

import argparse

import torch

from engine.bench import bench_config, engine_loop, peer_loop, subnormal_count, sustained, window_rate

CHUNK = 100


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads; 0 = auto (engine/threads.py)")
    ap.add_argument("--arms", default="plain,plain_flush,engine")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    cfg = bench_config("random_mul", "cpu", args.threads, **{"optim.lr": 1e-3})
    make = {
        "plain": lambda: peer_loop(cfg, flush_denormal=False),
        "plain_flush": lambda: peer_loop(cfg, flush_denormal=True),
        "engine": lambda: engine_loop(cfg),
    }
    arms = {name: make[name]() for name in args.arms.split(",")}
    print(f"random_mul, lr 1e-3, batch 512, {args.steps} steps, threads {torch.get_num_threads()}, chunks of {CHUNK}")
    secs = sustained(arms, args.steps, CHUNK)
    print(f"{'arm':<12} {'0-1k st/s':>10} {'2k-6k st/s':>11} {'ratio':>6}   steps/s per 500 steps")
    hi = min(args.steps, 6000)
    for name, s in secs.items():
        early, late = window_rate(s, CHUNK, 0, 1000), window_rate(s, CHUNK, 2000, hi)
        trace = " ".join(f"{window_rate(s, CHUNK, i, i + 500):.0f}" for i in range(0, args.steps, 500))
        print(f"{name:<12} {early:>10.1f} {late:>11.1f} {late / early:>6.2f}   {trace}")
    for name, run in arms.items():
        if hasattr(run, "tensors"):  # the plain loops: weights and Adam moments that ended up subnormal
            ts = run.tensors()
            total = sum(t.numel() for t in ts if t.is_floating_point())
            print(f"{name}: {subnormal_count(ts)} of {total} weights and Adam moments are subnormal at the end")


if __name__ == "__main__":
    main()
