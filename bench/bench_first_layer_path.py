"""The training step's first layer picked by FLOP count against the gathered tables at every batch size.

Before issue 16 the engine built the tables T_l = E W_lᵀ at every step (6·L·V·d·H FLOP); now it takes
them only when the batch is larger than the vocabulary and the plain Linear (6·B·L·d·H) otherwise.
Both arms are the engine as a run uses it (`Trainer` on random_mul, evaluations every 100 steps
included), built once per batch size and trained in alternating chunks in one process; the "tables"
arm pins `MLPEmbed.train_path` to the old path. A third arm trains model.kind = mlp_onehot (the same
MLP on one-hot tokens, its first layer a gather of W's columns), which should cost no more. Usage:

    python bench/bench_first_layer_path.py [--threads 1] [--reps 9] [--batches 64,512] [--device cpu]

A fourth arm pins the plain Linear at every batch size (on a GPU the tables' index_add backward, not
the FLOPs, can set the pace).
"""

from __future__ import annotations

import argparse
import statistics

import torch

from engine.bench import Stepper, bench_config, engine_loop, interleave
from engine.models.first_layer import tables_pay
from engine.models.mlp import MLPEmbed


def pinned(run: Stepper, path: str) -> Stepper:
    """The same stepper with the first-layer path pinned while it trains."""

    def go(n: int) -> None:
        MLPEmbed.train_path = path
        try:
            run(n)
        finally:
            MLPEmbed.train_path = "auto"

    return go


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads; 0 = auto (engine/threads.py)")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--batches", default="64,512")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(
        f"random_mul (p=97, V=99, d=128, H=512), threads {torch.get_num_threads()}, {args.reps} chunks per arm, medians"
    )
    for batch in (int(b) for b in args.batches.split(",")):
        cfg = bench_config("random_mul", args.device, args.threads, **{"train.batch_size": batch})
        steps = 100 if batch < 256 else 50
        onehot = bench_config(
            "random_mul", args.device, args.threads, **{"train.batch_size": batch, "model.kind": "mlp_onehot"}
        )
        arms = {
            "tables": pinned(engine_loop(cfg), "tables"),
            "auto": pinned(engine_loop(cfg), "auto"),
            "plain": pinned(engine_loop(cfg), "plain"),
            "onehot": engine_loop(onehot),
        }
        res = interleave(arms, steps, args.reps)
        ratios = [t / a for t, a in zip(res["tables"].seconds, res["auto"].seconds, strict=True)]
        auto = "tables" if tables_pay(batch, cfg.data.vocab_size, args.device.split(":")[0]) else "plain"
        t_sps, a_sps = res["tables"].steps_per_s, res["auto"].steps_per_s
        print(
            f"batch {batch:4d}: tables {t_sps:6.1f} steps/s   auto ({auto}) {a_sps:6.1f} steps/s   "
            f"auto / tables {a_sps / t_sps:.2f}x "
            f"(median of per-pair ratios {statistics.median(ratios):.2f}x, range {min(ratios):.2f}-{max(ratios):.2f})"
        )
        print(
            f"            mlp_onehot {res['onehot'].steps_per_s:6.1f} steps/s = "
            f"{res['onehot'].steps_per_s / a_sps:.2f}x auto; plain {res['plain'].steps_per_s:6.1f} steps/s = "
            f"{res['plain'].steps_per_s / a_sps:.2f}x auto"
        )


if __name__ == "__main__":
    main()
