"""The step as a CUDA graph (engine/train/gpu/cuda_graph.py) against the eager step, on one GPU.

1. Early check: the first 20 steps of `random_mul`, `adamlr_mul`, `adamlr_adaptive_mul` (c recomputed
   every 5 steps here) and `adamlr_mul` with a 10-step warm-up and a cosine (the lr and c the recording
   reads as device tensors), evaluated at every step, recorded against eager: train and val loss within
   a relative 1e-4 (the GPU's own run-to-run rounding is below 1e-5 this early,
   bench/gpu_divergence.py; a wrong lr, c, batch or undone warm-up shows at 1e-3 from the first
   steps), and summary.json says "cuda_graph": "on".
2. One run, steps/s: `engine_loop` (Trainer events, the preset's evaluations and probes) at batch 512
   and 64, graph and eager arms alternating in one process.
3. Many seeds as one model: `many_loop` at N = 1, 8, 32, graph and eager, alternating.
4. Whole commands: `grok run --preset random_mul --steps S` with train.cuda_graph true and false,
   alternating; steps/s from summary.json and the process's wall time.

    python bench/gpu_graph.py [--device cuda] [--steps 200] [--reps 3] [--pairs 2] [--run-steps 3000]
                              [--only early,one,many,commands]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.config import apply_overrides
from engine.events import EvalLogged, RunFinished
from engine.train.bench import bench_config, engine_loop, interleave, many_loop
from engine.train.trainer import Trainer, resolve_device

# (label, preset, overrides): the presets whose step records, and the lr and c paths into the recording
EARLY = (
    ("random_mul", "random_mul", {}),
    ("adamlr_mul", "adamlr_mul", {}),
    ("adamlr_adaptive_mul", "adamlr_adaptive_mul", {"optim.adaptive_every": 5}),
    ("adamlr_mul warm-up+cosine", "adamlr_mul", {"optim.warmup_steps": 10, "optim.schedule": "cosine"}),
)


def early(preset: str, device: str, graph: bool, **over: object) -> tuple[list[dict[str, float]], dict]:
    sets = {"train.max_steps": 20, "train.eval_every": 1, "train.cuda_graph": graph, **over}
    cfg = bench_config(preset, device, 0, **sets)
    rows, summary = [], {}
    for ev in Trainer(cfg):
        if isinstance(ev, EvalLogged):
            rows.append(ev.row)
        elif isinstance(ev, RunFinished):
            summary = ev.summary
    return rows, summary


def early_check(device: str) -> bool:
    ok = True
    for label, preset, over in EARLY:
        rows_e, _ = early(preset, device, False, **over)
        rows_g, summary = early(preset, device, True, **over)
        worst = max(
            abs(g[k] - e[k]) / max(abs(e[k]), 1e-12)
            for g, e in zip(rows_g, rows_e, strict=True)
            for k in ("train_loss", "val_loss")
        )
        state = summary.get("cuda_graph", "-")
        good = worst <= 1e-4 and (state == "on" or device == "cpu")  # the CPU never records: a dry run
        ok &= good
        print(
            f"early check {label}: max relative Δ loss {worst:.1e} over {len(rows_g)} rows, "
            f"cuda_graph {state}: {'pass' if good else 'FAIL'}"
        )
    return ok


def rates(res: dict, name: str, n: int = 1) -> tuple[float, float, float]:
    r = sorted(n * res[name].steps / s for s in res[name].seconds)
    return statistics.median(r), r[0], r[-1]


def one_run(device: str, steps: int, reps: int) -> None:
    for batch in (512, 64):
        arms = {}
        for graph in (True, False):
            cfg = bench_config("random_mul", device, 0, **{"train.batch_size": batch, "train.cuda_graph": graph})
            arms["graph" if graph else "eager"] = engine_loop(cfg)
        res = interleave(arms, steps, reps, warmup=30)
        g, e = rates(res, "graph"), rates(res, "eager")
        ratio = [a / b for a, b in zip(res["eager"].seconds, res["graph"].seconds, strict=True)]
        print(
            f"one run batch {batch}: graph {g[0]:.0f} steps/s ({g[1]:.0f}-{g[2]:.0f}), eager {e[0]:.0f} "
            f"({e[1]:.0f}-{e[2]:.0f}), graph / eager {statistics.median(ratio):.2f}x "
            f"({min(ratio):.2f}-{max(ratio):.2f}, {reps} alternating rounds)"
        )


def many(device: str, steps: int, reps: int) -> None:
    cfg = bench_config("random_mul", device, 0)
    sizes = (1, 8, 32)
    arms = {}
    for graph in (True, False):
        c = apply_overrides(cfg, {"train.cuda_graph": graph})
        for n in sizes:
            arms[f"{'graph' if graph else 'eager'} N={n}"] = many_loop(c, n)
    res = interleave(arms, steps, reps, warmup=20)
    for mode in ("graph", "eager"):
        base = rates(res, f"{mode} N=1")[0]
        for n in sizes:
            r = rates(res, f"{mode} N={n}", n)[0]
            print(f"many {mode} N = {n:<3} {r:8.0f} model-steps/s  {r / base:5.2f}x N=1")


def commands(device: str, steps: int, pairs: int) -> None:
    got: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(pairs):
            for graph in (True, False) if k % 2 == 0 else (False, True):
                out = Path(tmp) / f"{k}-{graph}"
                cmd = [sys.executable, "-m", "grok_tui", "run", "--preset", "random_mul", "--device", device]
                cmd += ["--steps", str(steps), "--out", str(out), "-q"]
                cmd += ["--set", f"train.cuda_graph={str(graph).lower()}"]
                t = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                wall = time.perf_counter() - t
                s = json.loads(next(out.glob("*/summary.json")).read_text())
                got[graph].append((s["steps_per_s"], wall))
                state = s.get("cuda_graph")
                print(f"grok run cuda_graph={graph}: {s['steps_per_s']:.0f} steps/s, {wall:.1f} s ({state})")
    g = statistics.median(v for v, _ in got[True])
    e = statistics.median(v for v, _ in got[False])
    wg = statistics.median(w for _, w in got[True])
    we = statistics.median(w for _, w in got[False])
    print(
        f"grok run random_mul --steps {steps}: graph / eager {g / e:.2f}x steps/s, wall {we / wg:.2f}x ({pairs} pairs)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--steps", type=int, default=200, help="steps per arm and round (multiple of 10)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=2, help="whole-command pairs")
    ap.add_argument("--run-steps", type=int, default=3000)
    ap.add_argument("--only", default="early,one,many,commands", help="the sections to run, in this order")
    args = ap.parse_args()
    only = set(args.only.split(","))
    dev = str(resolve_device(args.device))
    t = time.perf_counter()
    ok = early_check(dev) if "early" in only else True
    if "one" in only:
        one_run(dev, args.steps, args.reps)
    if "many" in only:
        many(dev, args.steps // 2, args.reps)
    if "commands" in only:
        commands(dev, args.run_steps, args.pairs)
    print(f"gpu_graph: {time.perf_counter() - t:.0f} s, early check {'pass' if ok else 'FAIL'}")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
