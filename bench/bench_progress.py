"""Wall-time cost of the progress probe at its preset cadence, against the same run with it off, in one process.

The arms alternate (off, on, off, on, ...) so that a change in machine load hits both; the median of the
per-pair ratios is reported, with the CPU time beside the wall time (the steadier of the two on a shared
machine) and the share of the on-arm's CPU time spent inside the probe. Usage:

    python bench/bench_progress.py [--preset progress_mul] [--steps 1500] [--pairs 3] [--threads 1] [--every N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from engine.config import RunConfig, apply_overrides
from engine.presets import resolve_config
from engine.trainer import Trainer


def timed_run(cfg: RunConfig) -> tuple[float, float, float]:
    """Wall and CPU seconds to train `cfg` to the end, and the CPU seconds inside the progress probe."""
    trainer = Trainer(cfg)
    inside = [0.0]
    for probe in trainer.probes.probes:
        if probe.name == "progress":
            measure = probe.measure

            def timed(step: int, measure=measure) -> dict:  # type: ignore[no-untyped-def, type-arg]
                c = time.process_time()
                out = measure(step)
                inside[0] += time.process_time() - c
                return out

            probe.measure = timed  # type: ignore[method-assign]
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in trainer:
        pass
    return time.perf_counter() - t0, time.process_time() - c0, inside[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="progress_mul")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--pairs", type=int, default=3, help="(off, on) pairs, alternating")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads; 0 = torch's default")
    ap.add_argument("--every", type=int, default=0, help="probe.progress_every for the on arm; 0 = the preset's")
    args = ap.parse_args()

    on, _ = resolve_config(preset=args.preset)
    common = {"train.max_steps": args.steps, "train.device": "cpu", "train.threads": args.threads, "train.patience": 0}
    if args.every:
        common["probe.progress_every"] = args.every
    on = apply_overrides(on, common)
    off = apply_overrides(on, {"probe.progress_every": 0})
    print(
        f"preset {args.preset}, {args.steps} steps, eval_every {on.train.eval_every}, "
        f"progress_every {on.probe.progress_every}, threads {args.threads}"
    )
    wall, cpu, share = [], [], []
    for i in range(args.pairs):
        t_off, c_off, _ = timed_run(off)
        t_on, c_on, inside = timed_run(on)
        wall.append(t_on / t_off)
        cpu.append(c_on / c_off)
        share.append(inside / c_on)
        print(
            f"pair {i}: off {t_off:.1f} s, on {t_on:.1f} s (wall x{wall[-1]:.3f}, cpu x{cpu[-1]:.3f}, "
            f"probe {100 * share[-1]:.1f}% of the on-arm's cpu)"
        )
    print(
        f"median over {args.pairs} pairs: wall x{statistics.median(wall):.3f}, cpu x{statistics.median(cpu):.3f}, "
        f"probe share {100 * statistics.median(share):.1f}% of cpu"
    )


if __name__ == "__main__":
    main()
