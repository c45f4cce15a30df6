"""What sits between the Trainer and `grok run`: the same training as a bare loop, with fewer event
hand-offs, through `Run` (run log and checkpoints), and as the whole command, in alternating processes.

Arms (each a fresh process, random_mul, 1 thread, probes off, evaluations every 1,000 steps):

- `bare`: `for ev in Trainer(cfg): pass`, a hand-off between the loop thread and the consumer every
  PROGRESS_EVERY = 10 steps plus the evaluations' events;
- `bare_1000`: the same with PROGRESS_EVERY = 1000, so about 100 times fewer hand-offs;
- `run`: `for ev in Run(cfg, out).events(): pass`: the run log and checkpoints added;
- `grok`: `grok run ... --quiet`, the whole command.

Each prints the summary's steps/s (training steps over training wall time), the process's CPU
seconds and its voluntary context switches. Usage:

    python bench/bench_handoff.py [--batch 64] [--steps 1500] [--pairs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS = {
    "train.eval_every": 1000,
    "train.threads": 1,
    "train.device": "cpu",
    "probe.hessian_every": 0,
    "probe.rank_every": 0,
    "probe.grad_every": 0,
    "probe.fourier_every": 0,
}

CHILD = """
import json, sys
import engine.trainer as T
from engine.config import apply_overrides
from engine.events import RunFinished
from engine.presets import resolve_config
arm, over, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
cfg = apply_overrides(resolve_config(preset="random_mul")[0], over)
if arm == "bare_1000":
    T.PROGRESS_EVERY = 1000
if arm == "run":
    from engine.run import Run
    events = Run(cfg, out).events()
else:
    events = iter(T.Trainer(cfg))
for ev in events:
    if isinstance(ev, RunFinished):
        print(json.dumps(ev.summary))
"""


def one(arm: str, batch: int, steps: int, out: Path) -> tuple[float, float, int]:
    over = {**SETS, "train.batch_size": batch, "train.max_steps": steps}
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if arm == "grok":
        cmd = [sys.executable, "-m", "grok_tui", "run", "--preset", "random_mul", "--steps", str(steps)]
        cmd += [a for k, v in over.items() if k != "train.max_steps" for a in ("--set", f"{k}={v}")]
        subprocess.run([*cmd, "--out", str(out), "--quiet"], env=env, cwd=ROOT, check=True, capture_output=True)
        summary = json.loads(next(out.glob("*/summary.json")).read_text())
    else:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, arm, json.dumps(over), str(out)],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for d in out.glob("*"):
        for f in d.iterdir():
            f.unlink()
        d.rmdir()
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return float(summary["steps_per_s"]), cpu, after.ru_nvcsw - before.ru_nvcsw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--arms", default="bare,bare_1000,run,grok")
    args = ap.parse_args()
    arms = args.arms.split(",")
    res: dict[str, list[float]] = {a: [] for a in arms}
    print(f"random_mul, batch {args.batch}, {args.steps} steps, 1 thread, probes off, {args.pairs} rounds")
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.pairs):
            for arm in arms if i % 2 == 0 else arms[::-1]:
                sps, cpu, vcs = one(arm, args.batch, args.steps, Path(tmp))
                res[arm].append(sps)
                print(f"  round {i + 1} {arm:>9}: {sps:7.1f} steps/s  {cpu:5.1f} CPU s  {vcs:6d} voluntary switches")
    for arm in arms:
        xs = res[arm]
        print(f"{arm:>9}: median {statistics.median(xs):7.1f} steps/s (range {min(xs):.1f}-{max(xs):.1f})")
    print(f"load average (1 min) {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
