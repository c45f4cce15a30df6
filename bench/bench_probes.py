"""Wall-time cost of all probes at their default cadences on `embed_mul`, against probes off, in one process.

The two arms are interleaved (off, on, off, on, ...) so that a change in machine load hits both, and the
median of the per-pair ratios is reported. Usage:

    python bench/bench_probes.py [--steps 1500] [--pairs 3] [--threads 1] [--preset embed_mul]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from engine.config import RunConfig, apply_overrides
from engine.events import EvalLogged
from engine.presets import resolve_config
from engine.probes import DEFAULT_CADENCES
from engine.trainer import Trainer


def timed_run(cfg: RunConfig) -> tuple[float, dict[str, list[float]]]:
    """Seconds to train `cfg` to the end (evaluations and probes included), and the probe columns logged."""
    trainer = Trainer(cfg)
    logged: dict[str, list[float]] = defaultdict(list)
    t0 = time.perf_counter()
    for ev in trainer:
        if isinstance(ev, EvalLogged):
            for k in ("hess_iters", "hess_E", "hess_W"):
                v = ev.row.get(k, float("nan"))
                if v == v:  # not NaN
                    logged[k].append(v)
    return time.perf_counter() - t0, logged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="embed_mul")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--pairs", type=int, default=3, help="(off, on) pairs, interleaved")
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads; 0 = torch's default")
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

    ratios = []
    for i in range(args.pairs):
        t_off, _ = timed_run(off)
        t_on, logged = timed_run(on)
        ratios.append(t_on / t_off)
        iters = [int(v) for v in logged["hess_iters"]]
        print(f"pair {i + 1}: off {t_off:.2f} s, on {t_on:.2f} s, ratio {t_on / t_off:.3f}; hess_iters {iters}")
    print(f"median ratio (on / off): {statistics.median(ratios):.3f} over {args.pairs} pairs")


if __name__ == "__main__":
    main()
