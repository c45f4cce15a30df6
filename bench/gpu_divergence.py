"""Where a batched member and its solo run part on one device: float rounding amplified, or a bug.

    python bench/gpu_divergence.py [--device cuda] [--preset adamlr_mul] [--steps 1000] [--every 20]

Trains one config (seed 0) several ways on the device and compares the evaluation rows step by step:

- solo against solo: is one run reproducible on this device at all (atomics in the embedding's
  backward, cuBLAS's split-K choices)?
- solo against solo under `torch.use_deterministic_algorithms(True)`;
- member 0 of a batched model of N seeds (engine/train/many.py) against solo.

Each line gives the relative loss difference and |Δ val acc| at a few steps, and the first step at
which the loss difference passes 1e-6, 1e-4 and 1e-2. Rounding that the training dynamics amplify
shows as a difference that starts near 1e-7 and grows step by step (fastest through the grokking
jump); a bug shows as a large difference from the first evaluations on.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from engine.config import RunConfig, apply_overrides
from engine.config.presets import load_preset
from engine.events import EvalLogged
from engine.train.many import train_many
from engine.train.trainer import Trainer

Rows = dict[int, dict[str, float]]


def solo(cfg: RunConfig) -> Rows:
    """One run alone: its evaluation rows by step."""
    return {ev.step: ev.row for ev in Trainer(cfg) if isinstance(ev, EvalLogged)}


def member0(cfgs: list[RunConfig]) -> Rows:
    """Member 0 of the batched model: its evaluation rows by step."""
    return {ev.step: ev.row for i, ev in train_many(cfgs) if i == 0 and isinstance(ev, EvalLogged)}


def compare(name: str, a: Rows, b: Rows, marks: tuple[int, ...]) -> None:
    """Print the relative train-loss gap at the marked steps and where it first passes each level."""
    steps = sorted(set(a) & set(b))
    rel = {s: abs(a[s]["train_loss"] - b[s]["train_loss"]) / max(abs(b[s]["train_loss"]), 1e-12) for s in steps}
    acc = max((abs(a[s]["val_acc"] - b[s]["val_acc"]) for s in steps), default=0.0)
    first = []
    for level in (1e-6, 1e-4, 1e-2):
        hit = next((s for s in steps if rel[s] > level), None)
        first.append(f">{level:g}@{hit if hit is not None else '-'}")
    at = "  ".join(f"{s}:{rel[s]:.1e}" for s in marks if s in rel)
    print(f"{name:<34} rows {len(a)}/{len(b)}  max|Δval_acc| {acc:.3f}  {' '.join(first)}  relΔloss {at}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--preset", default="adamlr_mul")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--every", type=int, default=20)
    ap.add_argument("--members", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="skip the deterministic-algorithms pair")
    ap.add_argument("--dtype", default="float32", help="float64 moves a rounding-born divergence later")
    args = ap.parse_args()
    base = load_preset(args.preset).config
    over = {
        "train.device": args.device,
        "train.max_steps": args.steps,
        "train.eval_every": args.every,
        "train.patience": 0,
        "train.dtype": args.dtype,
    }
    cfg = apply_overrides(base, over)
    cfgs = [apply_overrides(cfg, {"train.seed": s}) for s in range(args.members)]
    marks = tuple(
        sorted({s for s in (0, args.every, 5 * args.every, 100, 200, 400, 700, args.steps) if s <= args.steps})
    )
    print(f"{args.preset} on {args.device} in {args.dtype}, {args.steps} steps, rows every {args.every}")
    print(f"torch {torch.__version__}")
    if args.device.startswith("cuda"):
        print(
            f"tf32 matmul {torch.backends.cuda.matmul.allow_tf32}, cudnn {torch.backends.cudnn.allow_tf32}, "
            f"{torch.cuda.get_device_name()}"
        )
    t = time.perf_counter()
    a = solo(cfg)
    b = solo(cfg)
    compare("solo vs solo", a, b, marks)
    if not args.quick:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        c = solo(cfg)
        d = solo(cfg)
        compare("solo vs solo, deterministic", c, d, marks)
        compare("deterministic vs default solo", c, a, marks)
        torch.use_deterministic_algorithms(False)
    m = member0(cfgs)
    compare(f"member 0 of {args.members} vs solo", m, a, marks)
    m1 = member0(cfgs[:1])
    compare("batched N=1 vs solo", m1, a, marks)
    print(f"({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
