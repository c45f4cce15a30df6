"""Where one run's step spends its time on a device: host (Python, launches) or kernels.

    python bench/gpu_profile.py [--device cuda] [--preset adamlr_mul] [--steps 200]

Trains the preset's config with evaluations and probes off past a warm-up, then profiles `--steps`
steps with torch.profiler and prints: steps/s, host time per step, device (kernel) time per step,
kernel launches per step, host-device synchronizations per step, and the ops that cost the most host
time. A step whose host time is much larger than its kernel time is launch-bound: fewer, larger
kernels (fused optimizer, CUDA graphs) are what would speed it up, not faster arithmetic.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import torch
from torch.profiler import ProfilerActivity, profile

from engine.config import apply_overrides
from engine.config.presets import load_preset
from engine.events import StepsTaken
from engine.train.trainer import Trainer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--preset", default="adamlr_mul")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=100)
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
