"""Wall-time cost of all probes at their default cadences on `embed_mul`, against probes off, in one process.

The two arms are interleaved (off, on, off, on, ...) so that a change in machine load hits both, and the
median of the per-pair ratios is reported. The process CPU time is reported beside the wall time: on a
machine shared with other jobs it is the steadier of the two (with --threads 1 it equals the wall time
of an idle machine). Usage:

    python bench/bench_probes.py [--steps 1500] [--pairs 3] [--threads 1] [--preset embed_mul]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from typing import Any

from engine.config import RunConfig, apply_overrides
from engine.events import EvalLogged
from engine.presets import resolve_config
from engine.probes import DEFAULT_CADENCES
from engine.trainer import Trainer


def timed_run(cfg: RunConfig) -> tuple[float, float, dict[str, list[float]]]:
    """Wall and CPU seconds to train `cfg` to the end (evaluations and probes included), and the Hessian columns.

    `logged["probe_cpu"]` holds the CPU seconds spent inside `ProbeSet.at_eval`, timed within this run.
    """
    trainer = Trainer(cfg)
    logged: dict[str, list[float]] = defaultdict(list)
    at_eval = trainer.probes.at_eval

    def timed_at_eval(step: int) -> Any:
        c = time.process_time()
        out = at_eval(step)
        logged["probe_cpu"].append(time.process_time() - c)
        return out

    trainer.probes.at_eval = timed_at_eval  # type: ignore[method-assign]
    t0, c0 = time.perf_counter(), time.process_time()
    for ev in trainer:
        if isinstance(ev, EvalLogged):
            for k in ("hess_iters", "hess_E", "hess_W"):
                v = ev.row.get(k, float("nan"))
                if v == v:  # not NaN
                    logged[k].append(v)
    return time.perf_counter() - t0, time.process_time() - c0, logged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="embed_mul")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--pairs", type=int, default=3, help="(off, on) pairs, interleaved")
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads; 0 = auto (engine/threads.py)")
    ap.add_argument("--set", action="append", default=[], help="extra group.key=value for the probes-on arm")
    args = ap.parse_args()

    base, _ = resolve_config(preset=args.preset)
    common = {"train.max_steps": args.steps, "train.device": "cpu", "train.threads": args.threads}
    off = apply_overrides(base, common)
    extra = dict(s.split("=", 1) for s in args.set)
    on = apply_overrides(base, {**common, **DEFAULT_CADENCES, **extra})
    print(f"preset {args.preset}, {args.steps} steps, eval_every {off.train.eval_every}, threads {args.threads}")
    print("probes on: " + ", ".join(f"{k}={v}" for k, v in {**DEFAULT_CADENCES, **extra}.items()))
    pc = on.probe
    print(f"hessian batch {pc.hessian_batch or 'all'}, iteration cap {pc.hessian_iters}, tol {pc.hessian_tol}")

    wall, cpu, share = [], [], []
    for i in range(args.pairs):
        t_off, c_off, _ = timed_run(off)
        t_on, c_on, logged = timed_run(on)
        wall.append(t_on / t_off)
        cpu.append(c_on / c_off)
        probe_cpu = sum(logged["probe_cpu"])
        share.append(c_on / (c_on - probe_cpu))
        iters = [int(v) for v in logged["hess_iters"]]
        print(
            f"pair {i + 1}: wall off {t_off:.1f} s, on {t_on:.1f} s, ratio {wall[-1]:.3f}; "
            f"cpu off {c_off:.1f} s, on {c_on:.1f} s, ratio {cpu[-1]:.3f}; "
            f"inside at_eval {probe_cpu:.2f} s cpu, on / (on - probes) {share[-1]:.3f}; hess_iters {iters}"
        )
    print(f"median wall-time ratio (on / off): {statistics.median(wall):.3f} over {args.pairs} pairs")
    print(f"median CPU-time ratio (on / off): {statistics.median(cpu):.3f} over {args.pairs} pairs")
    print(f"median CPU-time ratio within the on arm (on / (on - probes)): {statistics.median(share):.3f}")


if __name__ == "__main__":
    main()
