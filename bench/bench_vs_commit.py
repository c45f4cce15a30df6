"""Whole `grok run` commands of this tree against those of another commit, arms alternating.

The user runs the command, not the Trainer, so this times whole processes: interpreter start, imports,
data and model set-up, the run directory, every evaluation and the exit. REF's tree is exported with
`git archive` into a temporary directory outside the repository and run with PYTHONPATH pointing there
and the same interpreter and packages; a preflight checks that each arm imports its own `engine`,
`grok_tui` and presets. Both arms run `python -m grok_tui run --preset random_mul` with the same
overrides, one warm-up run each (bytecode and file cache), then `--pairs` pairs per batch size in
alternating order (this, REF; REF, this; ...). Per run it reads the summary's steps/s (training time
only, from summary.json) and the wall and CPU time of the whole process. Usage:

    python bench/bench_vs_commit.py REF [--pairs 5] [--batches 64,512] [--steps 4000,1000] [--threads 1]
    python bench/bench_vs_commit.py REF --ref-tree DIR --device cuda   # on a box without the history

`--ref-tree DIR` takes REF's tree already exported (`git archive REF | tar -x -C DIR`), for a machine
that has a copy of the working tree but not its git history (a GPU box); REF is then only the label.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
print = functools.partial(print, flush=True)  # noqa: A001 - progress shows in a log file as it happens

PREFLIGHT = (
    "import engine, grok_tui, engine.presets as p; "
    "print(engine.__file__); print(grok_tui.__file__); print(p.presets_dir())"
)


@dataclass
class Arm:
    """One tree to run: its label, its root (put first on PYTHONPATH) and its commit."""

    label: str
    root: Path
    commit: str


@dataclass
class Result:
    sps: float  # the summary's steps/s (training steps over training wall time)
    wall: float  # the whole process, start to exit
    cpu: float  # user + system CPU seconds of the process


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def export_tree(ref: str, dest: Path) -> str:
    """`git archive REF` unpacked into dest; returns the full commit hash."""
    commit = git("rev-parse", "--verify", f"{ref}^{{commit}}")
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    # The installed package maps `grok_presets` to this tree's presets/; give REF its own.
    if (dest / "presets" / "__init__.py").exists():
        (dest / "grok_presets").symlink_to("presets")
    return commit


def child_env(arm: Arm, threads: int) -> dict[str, str]:
    env = dict(os.environ)
    # the arm's tree first; what the caller's PYTHONPATH held (a GPU box's wheels) after it
    env["PYTHONPATH"] = os.pathsep.join([str(arm.root), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's shell: bytecode is cached after the first run
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    return env


def preflight(arm: Arm, threads: int, cwd: Path) -> None:
    """Each arm must import its own tree: `python -c` and `-m` put the working directory first on
    sys.path, so both run from a directory outside the repository."""
    env = child_env(arm, threads)
    out = subprocess.run(
        [sys.executable, "-c", PREFLIGHT], env=env, cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.split()
    root = arm.root.resolve()
    for path in out:
        if not Path(path).resolve().is_relative_to(root):
            sys.exit(f"error: the {arm.label} arm imports {path}, outside its tree {root}")
    print(f"{arm.label:>8}: {arm.commit[:10]} from {root} (engine, grok_tui and presets checked)")


def grok_run(arm: Arm, out: Path, batch: int, steps: int, threads: int, eval_every: int, device: str) -> Result:
    sets = {
        "train.batch_size": batch,
        "train.eval_every": eval_every,
        "train.threads": threads,
        "train.device": device,
        "probe.hessian_every": 0,
        "probe.rank_every": 0,
        "probe.grad_every": 0,
        "probe.fourier_every": 0,
    }
    cmd = [sys.executable, "-m", "grok_tui", "run", "--preset", "random_mul", "--steps", str(steps)]
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    cmd += ["--out", str(out), "--quiet"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=child_env(arm, threads), cwd=out.parent, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"error: the {arm.label} arm's run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    runs = sorted(p for p in out.iterdir() if p.is_dir())
    summary = json.loads((runs[-1] / "summary.json").read_text())
    shutil.rmtree(out)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Result(float(summary["steps_per_s"]), wall, cpu)


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f}x (range {min(xs):.2f}-{max(xs):.2f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ref", help="the commit to compare against (a hash, tag or branch)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--batches", default="64,512")
    ap.add_argument("--steps", default="4000,1000", help="max_steps per batch size, in the order of --batches")
    ap.add_argument("--threads", type=int, default=1, help="torch threads in both arms; 0 = each arm's default")
    ap.add_argument("--eval-every", type=int, default=1000)
    ap.add_argument("--device", default="cpu", help="train.device in both arms")
    ap.add_argument("--ref-tree", type=Path, help="REF's tree, already exported (no git history needed)")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    steps = [int(s) for s in args.steps.split(",")]
    if len(steps) != len(batches):
        sys.exit("error: --steps needs one value per batch size")

    tmp = Path(tempfile.mkdtemp(prefix="bench-vs-commit-"))
    try:
        try:
            head = git("rev-parse", "HEAD")
            dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
        except (OSError, subprocess.CalledProcessError):
            head, dirty = "(no git history here)", ""
        this = Arm("this", ROOT, head)
        if args.ref_tree is not None:
            ref = Arm("ref", args.ref_tree.resolve(), args.ref)
            link = ref.root / "grok_presets"
            if (ref.root / "presets" / "__init__.py").exists() and not link.exists():
                link.symlink_to("presets")
        else:
            ref = Arm("ref", tmp / "ref", "")
            ref.commit = export_tree(args.ref, ref.root)
        print(
            f"whole `grok run --preset random_mul`, device {args.device}, threads {args.threads}, probes off, "
            f"eval every {args.eval_every}"
        )
        print(f"this tree at {head[:10]}{dirty} against {args.ref} = {ref.commit[:10]}")
        for arm in (this, ref):
            preflight(arm, args.threads, tmp)
        load = os.getloadavg()[0]
        for batch, n in zip(batches, steps, strict=True):
            for arm in (this, ref):  # warm-up: bytecode, file cache
                grok_run(arm, tmp / "out", batch, 10, args.threads, args.eval_every, args.device)
            sps_r, wall_r, cpu_r = [], [], []
            print(f"\nbatch {batch}, {n} steps, {args.pairs} pairs (steps/s from summary.json; whole-process wall s)")
            for i in range(args.pairs):
                order = (this, ref) if i % 2 == 0 else (ref, this)
                res = {
                    arm.label: grok_run(arm, tmp / "out", batch, n, args.threads, args.eval_every, args.device)
                    for arm in order
                }
                a, b = res["this"], res["ref"]
                sps_r.append(a.sps / b.sps)
                wall_r.append(b.wall / a.wall)
                cpu_r.append(b.cpu / a.cpu)
                print(
                    f"  pair {i + 1} ({order[0].label} first): this {a.sps:7.1f} steps/s {a.wall:6.1f} s "
                    f"{a.cpu:6.1f} cpu-s | ref {b.sps:7.1f} steps/s {b.wall:6.1f} s {b.cpu:6.1f} cpu-s | "
                    f"{a.sps / b.sps:.2f}x"
                )
            print(f"batch {batch}: this / ref steps/s {spread(sps_r)}")
            print(f"batch {batch}: ref / this wall time of the whole process {spread(wall_r)}")
            print(f"batch {batch}: ref / this CPU time of the whole process {spread(cpu_r)}")
        print(
            f"\nload average (1 min) {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
            f"{os.cpu_count()} cores"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
