"""Sweep pool against one-after-another: 8 short runs both ways, in one process, as a wall-time ratio.

    .venv/bin/python bench/bench_sweep.py [--runs 8] [--steps 300] [--workers 0] [--serial-threads 0]

The pool runs `workers` spawned processes with cores // workers torch threads each. Two baselines:
"serial in-process" runs the same members one after another inside this process with torch's
threads = cores (no start-up cost at all); "serial CLI" runs them as a user would without a sweep,
one `grok run` after another (each pays its own process start-up and torch import, as the pool's
workers do once). Target: pool ≤ 0.65× of running them one after another.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from engine.config import RunConfig, apply_overrides
from engine.sweep.events import MemberEnded
from engine.sweep.member import member_spec
from engine.sweep.pool import Sweep, default_workers
from engine.sweep.spec import Group, expand, parse_sweep
from engine.sweep.task import run_members


def make_group(root: str, runs: int, steps: int) -> Group:
    base = apply_overrides(
        RunConfig(preset="bench"),
        {"data.op": "mul", "optim.lr": 0.01, "train.max_steps": steps, "train.eval_every": 100, "train.device": "cpu"},
    )
    spec = parse_sweep({"seeds": runs})
    return Group.create(root, "bench", base, spec, [m for m, _ in expand(base, spec)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--workers", type=int, default=0, help="0 = one per core")
    ap.add_argument("--serial-threads", type=int, default=0, help="torch threads of the serial baseline; 0 = cores")
    a = ap.parse_args()
    cores = os.cpu_count() or 1
    workers = a.workers or default_workers()
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        serial_threads = a.serial_threads or cores
        torch.set_num_threads(serial_threads)
        g = make_group(os.path.join(tmp, "serial"), a.runs, a.steps)
        t0 = time.perf_counter()
        rows = run_members([member_spec(g, m) for m in g.members], None, lambda: False)
        serial = time.perf_counter() - t0
        assert all(r["status"] == "finished" for r in rows), rows

        toml = os.path.join(tmp, "bench.toml")
        with open(toml, "w") as fh:
            fh.write('[data]\nop = "mul"\n[optim]\nlr = 0.01\n[train]\neval_every = 100\ndevice = "cpu"\n')
        t0 = time.perf_counter()
        for seed in range(a.runs):
            subprocess.run(
                [sys.executable, "-m", "grok_tui", "run", "--config", toml, "--seed", str(seed), "--steps",
                 str(a.steps), "--quiet", "--out", os.path.join(tmp, "cli")],
                check=True, capture_output=True,
            )  # fmt: skip
        serial_cli = time.perf_counter() - t0

        g = make_group(os.path.join(tmp, "pool"), a.runs, a.steps)
        t0 = time.perf_counter()
        ends = [e for e in Sweep(g, workers=workers).events() if isinstance(e, MemberEnded)]
        pool = time.perf_counter() - t0
        assert len(ends) == a.runs and all(e.row["status"] == "finished" for e in ends)

    print(f"{a.runs} runs × {a.steps} steps (mul mod 97, batch 512), {cores} cores, torch {torch.__version__}")
    print(f"serial in-process, {serial_threads} torch thread(s): {serial:7.1f} s")
    print(f"serial CLI (`grok run` × {a.runs}):          {serial_cli:7.1f} s")
    print(f"pool, {workers} workers × {max(cores // workers, 1)} thread(s):          {pool:7.1f} s")
    print(f"pool / serial CLI = {pool / serial_cli:.2f}  (target <= 0.65)")
    print(f"pool / serial in-process = {pool / serial:.2f}")


if __name__ == "__main__":
    main()
