"""Engine steps/s of this tree against another commit, interleaved: (base, this), (base, this), ...

Each measurement is a fresh process in its tree (the commit is exported with `git archive` into a
temporary directory): `random_mul` (p=97, d=128) at the given batch sizes, as one `Trainer` and, with
--members N, as N seeds of one batched `ManyTrainer`, evaluations included. Pairs alternate so that a
change in the machine's load falls on both trees alike; the ratio of each pair is reported, then the
median ratio and its range. Usage:

    python bench/bench_engine_vs_commit.py BASE [--batches 64,512] [--pairs 3] [--steps 200] [--members 0,8]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run inside the tree under test: only engine.bench's long-standing API (bench_config, engine_loop, many_loop).
CHILD = """
import sys, time, torch
from engine.bench import bench_config, engine_loop, many_loop
batch, members, steps, threads = (int(a) for a in sys.argv[1:5])
cfg = bench_config("random_mul", "cpu", threads, **{"train.batch_size": batch})
run = many_loop(cfg, members) if members else engine_loop(cfg)
run(20)
t, c = time.perf_counter(), time.process_time()
run(steps)
print(steps / (time.perf_counter() - t), steps / (time.process_time() - c))
"""


def measure(tree: Path, batch: int, members: int, steps: int, threads: int) -> tuple[float, float]:
    """(steps per wall second, steps per CPU second of the process): on a loaded machine the second
    one moves much less with the load, and with one thread it counts the work the step does."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(batch), str(members), str(steps), str(threads)],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": str(threads or 2)},
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def export(rev: str, where: Path) -> Path:
    """The files of commit `rev` in `where`."""
    where.mkdir()
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", help="the commit to compare against (e.g. HEAD~3)")
    ap.add_argument("--this", default="", help="a commit to measure instead of the working tree")
    ap.add_argument("--batches", default="64,512")
    ap.add_argument("--members", default="0", help="0 = one Trainer; N = N seeds as one ManyTrainer")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200, help="timed steps per measurement (a multiple of 10)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = export(args.base, Path(tmp) / "base")
        this = export(args.this, Path(tmp) / "this") if args.this else ROOT
        for members in (int(m) for m in args.members.split(",")):
            for batch in (int(b) for b in args.batches.split(",")):
                ratios: dict[str, list[float]] = {"wall": [], "cpu": []}
                tag = f"members={members} batch={batch}"
                for k in range(args.pairs):
                    a = measure(base, batch, members, args.steps, args.threads)
                    b = measure(this, batch, members, args.steps, args.threads)
                    for j, clock in enumerate(ratios):
                        ratios[clock].append(b[j] / a[j])
                        print(
                            f"{tag} pair {k + 1} {clock}: base {a[j]:.1f}  this {b[j]:.1f} steps/s"
                            f"  ratio {b[j] / a[j]:.3f}"
                        )
                    sys.stdout.flush()
                for clock, rs in ratios.items():
                    med, lo, hi = statistics.median(rs), min(rs), max(rs)
                    print(f"{tag} {clock}: median ratio {med:.3f} (range {lo:.3f}-{hi:.3f})")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
