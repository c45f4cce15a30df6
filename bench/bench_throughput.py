"""Engine vs the peer loop (DataLoader + shuffle + Adam) at the paper's config, and the fraction of the matmul ceiling.

Both arms train `random_mul` (p=97, d=128, batch 512) in one process, alternating (peer, engine, peer,
...); the engine includes its evaluations every 100 steps, the peer loop evaluates nothing. The ceiling
is a 2048³ fp32 matmul at the same thread count, re-measured before every repetition (median). Usage:

    python bench/bench_throughput.py [--threads 1] [--reps 7] [--steps 50] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics

import torch

from engine.bench import (
    ArmResult,
    bench_config,
    engine_flops,
    engine_loop,
    interleave,
    matmul_ceiling,
    nominal_flops,
    peer_loop,
)
from engine.trainer import resolve_device


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads; 0 = auto (engine/threads.py)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    dev = resolve_device(args.device)
    cfg = bench_config("random_mul", str(dev), args.threads)
    arms = {"peer": peer_loop(cfg), "engine": engine_loop(cfg)}
    # The ceiling is re-measured before every repetition, so it sees the same machine state as the arms.
    ceilings, res = [], {}
    for rep in range(args.reps):
        ceilings.append(matmul_ceiling(dev, reps=3))
        for name, r in interleave(arms, args.steps, 1, warmup=20 if rep == 0 else 0).items():
            res.setdefault(name, ArmResult(name, r.steps, []))
            res[name].seconds.extend(r.seconds)
    ceiling = statistics.median(ceilings)
    nominal, actual = nominal_flops(cfg), engine_flops(cfg)
    print(f"random_mul on {dev}, threads {torch.get_num_threads()}, {args.reps} × {args.steps} steps per arm, medians")
    print(f"ceiling (2048³ fp32 matmul): {ceiling:.1f} GFLOP/s  per rep: {' '.join(f'{c:.0f}' for c in ceilings)}")
    print(f"nominal {nominal / 1e6:.0f} MFLOP/step (6·B·matmul params); engine actual {actual / 1e6:.0f} MFLOP/step")
    for name, r in res.items():
        sps = r.steps_per_s
        per_rep = " ".join(f"{r.steps / s:.1f}" for s in r.seconds)
        print(
            f"{name:<7} {sps:7.1f} steps/s  {sps * nominal / 1e9:6.1f} GFLOP/s nominal = "
            f"{sps * nominal / 1e9 / ceiling:4.0%} of ceiling   per rep: {per_rep}"
        )
    eng = res["engine"].steps_per_s
    ratios = [p / e for p, e in zip(res["peer"].seconds, res["engine"].seconds, strict=True)]
    speedup = eng / res["peer"].steps_per_s
    print(f"engine / peer: {speedup:.2f}x (median of per-pair ratios {statistics.median(ratios):.2f}x)")
    spent = eng * actual / 1e9
    print(f"engine, FLOP actually spent: {spent:.1f} GFLOP/s = {spent / ceiling:.0%} of ceiling")


if __name__ == "__main__":
    main()
