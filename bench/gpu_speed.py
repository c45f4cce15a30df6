"""GPU speed: the recorded step against eager, many seeds as one model, a profile, and the paper's batches.

    python bench/gpu_speed.py graph    [--device cuda] [--steps 200] [--reps 3] [--pairs 2] [--run-steps 3000]
                                       [--only early,one,many,commands]
    python bench/gpu_speed.py many     [--device cuda] [--sizes 1,8,32,128] [--steps 20] [--reps 3] [--threads 1]
                                       [--instruments]
    python bench/gpu_speed.py profile  [--device cuda] [--preset adamlr_mul] [--steps 200]
    python bench/gpu_speed.py batches  [--device cuda] [--workers N] [--free-gib G] [--set k=v ...]

`graph`: the step as a CUDA graph (engine/train/gpu/cuda_graph.py) against the eager step, on one GPU.

1. Early check: the first 20 steps of `random_mul`, `adamlr_mul`, `adamlr_adaptive_mul` (c recomputed
   every 5 steps here) and `adamlr_mul` with a 10-step warm-up and a cosine (the lr and c the recording
   reads as device tensors), evaluated at every step, recorded against eager: train and val loss within
   a relative 1e-4 (the GPU's own run-to-run rounding is below 1e-5 this early,
   `bench/gpu_agree.py divergence`; a wrong lr, c, batch or undone warm-up shows at 1e-3 from the first
   steps), and summary.json says "cuda_graph": "on".
2. One run, steps/s: `engine_loop` (Trainer events, the preset's evaluations and probes) at batch 512
   and 64, graph and eager arms alternating in one process.
3. Many seeds as one model: `many_loop` at N = 1, 8, 32, graph and eager, alternating.
4. Whole commands: `grok run --preset random_mul --steps S` with train.cuda_graph true and false,
   alternating; steps/s from summary.json and the process's wall time.

`many`: many seeds as one batched model (engine/train/many.py), model-steps/s for N members against
N = 1. Arms alternate in one process. On a GPU the goal is ≥ 0.7·N× the single-model rate up to N = 32;
on the CPU one model already keeps the cores busy, so the figure shows the overhead. `--instruments`:
instead, each N with the preset's evaluations and probes and with every probe off, alternating, and the
instruments' share of a stacked step, 1 − (steps/s full) / (steps/s probes off); give --steps a multiple
of the slowest cadence it should include (random_mul: rank every 500, Hessian every 2,000).

`profile`: where one run's step spends its time on a device, host (Python, launches) or kernels. Trains
the preset's config with evaluations and probes off past a warm-up, then profiles `--steps` steps with
torch.profiler and prints: steps/s, host time per step, device (kernel) time per step, kernel launches
per step, host-device synchronizations per step, and the ops that cost the most host time. A step whose
host time is much larger than its kernel time is launch-bound: fewer, larger kernels (fused optimizer,
CUDA graphs) are what would speed it up, not faster arithmetic.

`batches`: the batches `grok sweep --preset paper` forms on a GPU, members per stacked model, sweep by
sweep. The card's free memory is asked of the card (`torch.cuda.mem_get_info`) unless --free-gib gives
it, so this also answers for a card that is not here. --workers is the sweep's (default: one per core,
as `grok sweep`); each worker may hold a batch on the card at once. Members are expanded as the sweep
expands them (engine/sweep/spec.py), with train.device set to --device; a fork member starts from its
parent's checkpoint and so trains alone. The sizing is engine/sweep/card_memory.py's; `plan` is
engine/sweep/batched.py's, the one the sweep calls.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from engine.claims.paper import PAPER_SWEEPS
from engine.config import ConfigError, RunConfig, apply_overrides, parse_set
from engine.config.presets import load_preset
from engine.events import EvalLogged, RunFinished, StepsTaken
from engine.summary import RunSummary
from engine.sweep.batched import plan
from engine.sweep.card_memory import MAX_MEMBERS, MEMORY_FRACTION, free_bytes, member_bytes
from engine.sweep.member import MemberSpec
from engine.sweep.pool import default_workers
from engine.sweep.spec import expand, parse_sweep
from engine.train.bench import bench_config, engine_loop, interleave, many_loop
from engine.train.trainer import Trainer, resolve_device

# (label, preset, overrides): the presets whose step records, and the lr and c paths into the recording
EARLY: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("random_mul", "random_mul", {}),
    ("adamlr_mul", "adamlr_mul", {}),
    ("adamlr_adaptive_mul", "adamlr_adaptive_mul", {"optim.adaptive_every": 5}),
    ("adamlr_mul warm-up+cosine", "adamlr_mul", {"optim.warmup_steps": 10, "optim.schedule": "cosine"}),
)


def early(preset: str, device: str, graph: bool, **over: object) -> tuple[list[dict[str, float]], RunSummary | None]:
    sets = {"train.max_steps": 20, "train.eval_every": 1, "train.cuda_graph": graph, **over}
    cfg = bench_config(preset, device, 0, **sets)
    rows: list[dict[str, float]] = []
    summary: RunSummary | None = None
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
        state = (summary.cuda_graph if summary else None) or "-"
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


def many_seeds(device: str, steps: int, reps: int) -> None:
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


def graph_main(argv: list[str]) -> None:
    """`graph`: see the module's docstring."""
    ap = argparse.ArgumentParser(
        prog="bench/gpu_speed.py graph", description="The step as a CUDA graph against the eager step, on one GPU."
    )
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--steps", type=int, default=200, help="steps per arm and round (multiple of 10)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=2, help="whole-command pairs")
    ap.add_argument("--run-steps", type=int, default=3000)
    ap.add_argument("--only", default="early,one,many,commands", help="the sections to run, in this order")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    dev = str(resolve_device(args.device))
    t = time.perf_counter()
    ok = early_check(dev) if "early" in only else True
    if "one" in only:
        one_run(dev, args.steps, args.reps)
    if "many" in only:
        many_seeds(dev, args.steps // 2, args.reps)
    if "commands" in only:
        commands(dev, args.run_steps, args.pairs)
    print(f"gpu_speed graph: {time.perf_counter() - t:.0f} s, early check {'pass' if ok else 'FAIL'}")
    if not ok:
        sys.exit(1)


def many_main(argv: list[str]) -> None:
    """`many`: see the module's docstring."""
    ap = argparse.ArgumentParser(
        prog="bench/gpu_speed.py many",
        description="Many seeds as one batched model: model-steps/s for N members against N = 1.",
    )
    ap.add_argument("--device", default="auto")
    ap.add_argument("--sizes", default="1,8,32")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads; 0 = auto (engine/train/threads.py)")
    ap.add_argument("--instruments", action="store_true", help="each N with its probes on and off: their share")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    dev = resolve_device(args.device)
    cfg = bench_config("random_mul", str(dev), args.threads)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.instruments:
        instruments_share(cfg, sizes, args.steps, args.reps)
        return
    arms = {"engine": engine_loop(cfg), **{f"N={n}": many_loop(cfg, n) for n in sizes}}
    res = interleave(arms, args.steps, args.reps, warmup=10)
    print(f"random_mul on {dev}, threads {torch.get_num_threads()}, {args.reps} × {args.steps} steps per arm, medians")
    single = res["engine"].steps_per_s
    print(f"single Trainer (gathered first layer): {single:.1f} steps/s")
    base = res[f"N={sizes[0]}"].steps_per_s * sizes[0]
    for n in sizes:
        r = res[f"N={n}"].steps_per_s * n
        print(f"N = {n:<4} {r:8.1f} model-steps/s  {r / base:5.2f}x N={sizes[0]}  {r / single:5.2f}x one Trainer")


def instruments_share(cfg: RunConfig, sizes: list[int], steps: int, reps: int) -> None:
    """`many --instruments`: N stacked members with the preset's probes and with none, arms alternating; the
    evaluations (every eval_every) run in both, so the share is the probes' alone."""
    off = {f"probe.{f.name}": 0 for f in dataclasses.fields(cfg.probe) if f.name.endswith("_every")}
    arms = {}
    for n in sizes:
        arms[f"N={n} full"] = many_loop(cfg, n)
        arms[f"N={n} off"] = many_loop(apply_overrides(cfg, off), n)
    res = interleave(arms, steps, reps, warmup=10)
    on = ", ".join(f"{k} {getattr(cfg.probe, k[6:])}" for k in off if getattr(cfg.probe, k[6:]))
    print(f"random_mul ({on}), eval every {cfg.train.eval_every}; {reps} x {steps} steps per arm, medians")
    for n in sizes:
        full, bare = res[f"N={n} full"], res[f"N={n} off"]
        chunks = [1 - b / a for a, b in zip(full.seconds, bare.seconds, strict=True)]  # per pair: its share
        print(
            f"N = {n:<4} full {full.steps_per_s * n:8.1f} model-steps/s, probes off {bare.steps_per_s * n:8.1f}: "
            f"the probes {1 - full.steps_per_s / bare.steps_per_s:.0%} of a stacked step "
            f"(pairs {min(chunks):.0%} to {max(chunks):.0%})"
        )


def profile_main(argv: list[str]) -> None:
    """`profile`: see the module's docstring."""
    ap = argparse.ArgumentParser(
        prog="bench/gpu_speed.py profile",
        description="Where one run's step spends its time on a device: host or kernels.",
    )
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--preset", default="adamlr_mul")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=100)
    args = ap.parse_args(argv)
    total = args.warmup + args.steps
    base = load_preset(args.preset).config
    probes_off = {f"probe.{f.name}": 0 for f in dataclasses.fields(base.probe) if f.name.endswith("_every")}
    over = {"train.device": args.device, "train.max_steps": total + 10, "train.eval_every": 10 * total}
    cfg = apply_overrides(base, {**over, "train.patience": 0, **probes_off})
    # The loop's own generator on this thread: the profiler records the thread it runs on, and
    # `Trainer` iterates on a thread of its own (engine/train/loop_thread.py on_loop_thread).
    events = Trainer(cfg)._loop()

    def until(step: int) -> None:
        for _, ev in events:
            if isinstance(ev, StepsTaken) and ev.step >= step:
                return

    until(args.warmup)
    cuda = args.device.startswith("cuda")
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    if cuda:
        torch.cuda.synchronize()
    t = time.perf_counter()
    with profile(activities=acts) as prof:
        until(total)
        if cuda:
            torch.cuda.synchronize()
    wall = time.perf_counter() - t
    n = total - args.warmup
    ka = prof.key_averages()
    launches = sum(e.count for e in ka if "LaunchKernel" in e.key or "cuLaunch" in e.key)
    syncs = sum(e.count for e in ka if "Synchronize" in e.key or "Memcpy" in e.key)
    dev_us = sum(getattr(e, "self_device_time_total", 0.0) for e in ka)
    print(f"{args.preset} on {args.device}: {n} steps in {wall:.2f} s under the profiler = {n / wall:.0f} steps/s")
    print(f"host time per step {1e3 * wall / n:.2f} ms, kernel time per step {dev_us / 1e3 / n:.3f} ms")
    print(f"kernel launches per step {launches / n:.1f}, syncs and copies per step {syncs / n:.2f}")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=18, max_name_column_width=48))


GIB = 2**30


def batch_sizes(batches: list[list[MemberSpec]]) -> str:
    """`2×128 + 1×40 + 3 alone`: the stacked batches by size, then the members that train alone."""
    stacked = Counter(len(b) for b in batches if len(b) > 1)
    alone = sum(1 for b in batches if len(b) == 1)
    parts = [f"{k}×{n}" for n, k in sorted(stacked.items(), reverse=True)]
    return " + ".join(parts + ([f"{alone} alone"] if alone else [])) or "none"


def batches_main(argv: list[str]) -> None:
    """`batches`: see the module's docstring."""
    ap = argparse.ArgumentParser(
        prog="bench/gpu_speed.py batches",
        description="The batches `grok sweep --preset paper` forms on a GPU, members per stacked model.",
    )
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--workers", type=int, default=0, help="the sweep's workers; 0 = one per core")
    ap.add_argument("--free-gib", type=float, default=0.0, help="the card's free memory; 0 = ask the card")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="k=v for every member (repeat)")
    args = ap.parse_args(argv)
    try:
        sets = parse_set(args.sets) | {"train.device": args.device}
    except ConfigError as e:
        ap.error(str(e))  # one line on stderr, exit 2
    workers = args.workers or default_workers()
    on_card = args.device.startswith("cuda")
    free = int(args.free_gib * GIB) if args.free_gib or not on_card else free_bytes(args.device)
    if on_card:
        print(
            f"card: {free / GIB:.1f} GiB free, {workers} workers, {MEMORY_FRACTION:.0%} of it for the batches, "
            f"at most {MAX_MEMBERS} members a batch"
        )
    else:
        print(f"device {args.device}: no card, every member alone (a CPU sweep runs its members one by one)")
    total = Counter[int]()
    for name, _ in PAPER_SWEEPS:
        p = load_preset(name)
        spec = parse_sweep(p.sweep, str(p.path))
        try:
            members = [(m, apply_overrides(c, sets)) for m, c in expand(p.config, spec, str(p.path))]
        except ConfigError as e:
            print(f"error: {e}", file=sys.stderr)
            raise SystemExit(2) from None
        specs = [MemberSpec(m.id, c, f"{name}/{m.id}", has_checkpoint=bool(m.fork_of)) for m, c in members]
        batches = plan(specs, workers=workers, free=free)
        total.update(len(b) for b in batches)
        one = member_bytes(members[0][1]).total
        print(f"{name:24s} {len(specs):4d} members, {one / 2**20:5.1f} MiB each: {batch_sizes(batches)}")
    print(f"all: {sum(n * k for n, k in total.items())} members in {sum(total.values())} batches")


COMMANDS = {"graph": graph_main, "many": many_main, "profile": profile_main, "batches": batches_main}


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python bench/gpu_speed.py {{{','.join(COMMANDS)}}} [options] (--help after one for its own)")
    COMMANDS[sys.argv[1]](sys.argv[2:])
