"""torch.compile of the training step on the CPU against the eager step, compile time counted.

The step is the engine's (random_mul: `MLPEmbed.forward_train`, cross-entropy, backward, fused Adam,
the optimizer's own parameter groups) built twice from the same seed: once eager, once with
forward and loss under `torch.compile` (backward through AOTAutograd, the optimizer eager, as
torch.compile leaves it by default when only the model is compiled). The first compiled calls are
timed apart (compile time); then the arms train in alternating chunks and the medians are compared.
A run of S steps gains from compiling only when S · (1/eager − 1/compiled) > compile time: the
break-even printed last. Usage:

    python bench/bench_compile.py [--batches 64,512] [--reps 7] [--steps 100] [--threads 1]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time

import torch
import torch.nn.functional as F

from engine.bench import bench_config
from engine.dataset import load_dataset
from engine.models import build_model
from engine.optim import build_optimizer


def make_step(cfg, compiled: bool):
    torch.manual_seed(cfg.train.seed)
    data = load_dataset(cfg.data, cfg.train.seed, torch.device("cpu"))
    model = build_model(cfg)
    opt = build_optimizer(model, cfg)
    fwd = getattr(model, "forward_train", model)

    def loss_of(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(fwd(x), y)

    loss_fn = torch.compile(loss_of) if compiled else loss_of
    x_all, y_all = data.x_train, data.y_train
    gen = torch.Generator().manual_seed(0)
    B = cfg.train.batch_size

    def step(n: int) -> None:
        for _ in range(n):
            idx = torch.randint(0, len(x_all), (B,), generator=gen)
            loss = loss_fn(x_all[idx], y_all[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    return step


def timed(step, n: int) -> float:
    t = time.perf_counter()
    step(n)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="64,512")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--steps", type=int, default=100, help="steps per chunk")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"random_mul training step, torch {torch.__version__}, threads {torch.get_num_threads()}, medians")
    for batch in (int(b) for b in args.batches.split(",")):
        cfg = bench_config("random_mul", "cpu", args.threads, **{"train.batch_size": batch})
        eager = make_step(cfg, compiled=False)
        t0 = time.perf_counter()
        import_s = 0.0
        if batch == int(args.batches.split(",")[0]):
            importlib.import_module("torch._dynamo")  # its import is part of the first compile's cost
            import_s = time.perf_counter() - t0
        comp = make_step(cfg, compiled=True)
        t1 = time.perf_counter()
        comp(3)  # compiles (forward graph, then the backward graph on the first backward)
        compile_s = time.perf_counter() - t1 + import_s
        eager(3)
        e_t, c_t = [], []
        for _ in range(args.reps):
            e_t.append(timed(eager, args.steps))
            c_t.append(timed(comp, args.steps))
        e_sps = args.steps / statistics.median(e_t)
        c_sps = args.steps / statistics.median(c_t)
        ratios = sorted(e / c for e, c in zip(e_t, c_t, strict=True))
        gain = 1 / e_sps - 1 / c_sps
        even = f"{compile_s / gain:,.0f} steps" if gain > 0 else "never (compiled is not faster)"
        print(
            f"batch {batch:4d}: eager {e_sps:6.1f} steps/s  compiled {c_sps:6.1f} steps/s  "
            f"compiled / eager {c_sps / e_sps:.2f}x (per-pair {statistics.median(ratios):.2f}x, "
            f"range {ratios[0]:.2f}-{ratios[-1]:.2f})  compile {compile_s:.1f} s "
            f"(dynamo import {import_s:.1f} s)  break-even {even}"
        )


if __name__ == "__main__":
    main()
