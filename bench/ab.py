"""This tree against another commit, arms alternating: whole commands, the engine's step, or the first row.

REF's tree is exported once with `git archive` into a temporary directory outside the repository and run
with PYTHONPATH pointing there, the same interpreter and packages; a preflight checks that each arm
imports its own `engine`, `grok_tui` and presets. Each measurement is a fresh process. After one warm-up
per arm (bytecode, file cache), `--pairs` pairs run in alternating order (this, REF; REF, this; ...) so
that a change in the machine's load falls on both arms alike. Every figure is printed per pair, then as
the median of the pairs' ratios and their range, written so that above 1 means this tree is faster.

Modes:

- `command`: `grok run --preset PRESET --steps N --quiet` per batch size, probes off: the summary's
  steps/s (training time only), and the wall and CPU time of the whole process (interpreter start,
  imports, set-up, every evaluation, the exit).
- `engine`: engine steps/s of `engine.train.bench`'s loops in a child process, as one Trainer, or with
  `--members N` as N seeds of one batched ManyTrainer; per wall second and per CPU second (on a loaded
  machine the second moves much less with the load, and with one thread it counts the step's work).
- `first-row`: from starting a command to its step-0 row in metrics.csv (the run directory polled every
  5 ms): `grok run --steps 1` (and its whole process), and `grok tui` on a pseudo-terminal (120x40),
  stopped once its first row is on disk (`--arms run,tui`).

    python bench/ab.py REF --mode command [--pairs 5] [--batches 64,512] [--steps 4000,1000]
    python bench/ab.py REF --mode engine [--batches 64,512] [--steps 200] [--members 0,8]
    python bench/ab.py REF --mode first-row [--arms run,tui] [--set k=v ...]
    python bench/ab.py REF --ref-tree DIR --device cuda   # REF's tree already exported, no git history here
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pty
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
print = functools.partial(print, flush=True)  # noqa: A001 - progress shows in a log file as it happens

PREFLIGHT = (
    "import engine, grok_tui, engine.config.presets as p; "
    "print(engine.__file__); print(grok_tui.__file__); print(p.presets_dir())"
)
PROBES_OFF = ("probe.hessian_every=0", "probe.rank_every=0", "probe.grad_every=0", "probe.fourier_every=0")

# Run inside the tree under test: only engine.train.bench's long-standing API (bench_config, engine_loop, many_loop).
ENGINE_CHILD = """
import sys, time, torch
from engine.train.bench import bench_config, engine_loop, many_loop
batch, members, steps, threads = (int(a) for a in sys.argv[1:5])
cfg = bench_config("random_mul", "cpu", threads, **{"train.batch_size": batch})
run = many_loop(cfg, members) if members else engine_loop(cfg)
run(20)
t, c = time.perf_counter(), time.process_time()
run(steps)
print(steps / (time.perf_counter() - t), steps / (time.process_time() - c))
"""

# A figure per measurement: its name, and whether larger is faster (a rate) or slower (a time).
Figures = dict[str, float]
RATES = {"steps/s", "steps/wall-s", "steps/cpu-s"}


@dataclass
class Arm:
    """One tree to run: its label, its root (put first on PYTHONPATH) and its commit."""

    label: str
    root: Path
    commit: str


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def export_tree(ref: str, dest: Path) -> str:
    """`git archive REF` unpacked into dest; returns the full commit hash."""
    commit = git("rev-parse", "--verify", f"{ref}^{{commit}}")
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    link_presets(dest)
    return commit


def link_presets(root: Path) -> None:
    """The installed package maps `grok_presets` to this tree's presets/; give another tree its own."""
    link = root / "grok_presets"
    if (root / "presets" / "__init__.py").exists() and not link.exists():
        link.symlink_to("presets")


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
    sys.path, so every child runs from a directory outside the repository."""
    out = subprocess.run(
        [sys.executable, "-c", PREFLIGHT], env=child_env(arm, threads), cwd=cwd, capture_output=True, text=True
    )
    if out.returncode != 0:
        sys.exit(f"error: the {arm.label} arm does not import:\n{out.stderr[-2000:]}")
    root = arm.root.resolve()
    for path in out.stdout.split():
        if not Path(path).resolve().is_relative_to(root):
            sys.exit(f"error: the {arm.label} arm imports {path}, outside its tree {root}")
    print(f"{arm.label:>8}: {arm.commit[:10]} from {root} (engine, grok_tui and presets checked)")


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def grok_run(arm: Arm, tmp: Path, args: argparse.Namespace, batch: int, steps: int) -> Figures:
    """`--mode command`: one whole `grok run`."""
    out = tmp / "out"
    sets = [f"train.batch_size={batch}", f"train.eval_every={args.eval_every}", f"train.device={args.device}"]
    sets += [f"train.threads={args.threads}", *PROBES_OFF, *args.sets]
    cmd = [sys.executable, "-m", "grok_tui", "run", "--preset", args.preset, "--steps", str(steps)]
    cmd += [a for s in sets for a in ("--set", s)] + ["--out", str(out), "--quiet"]
    cpu, t = children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, env=child_env(arm, args.threads), cwd=tmp, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t, children_cpu() - cpu
    if proc.returncode != 0:
        sys.exit(f"error: the {arm.label} arm's run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    summary = json.loads((run / "summary.json").read_text())
    shutil.rmtree(out)
    return {"steps/s": float(summary["steps_per_s"]), "wall s": wall, "CPU s": cpu}


def engine_steps(arm: Arm, tmp: Path, args: argparse.Namespace, batch: int, members: int) -> Figures:
    """`--mode engine`: steps per wall and per CPU second of the engine's loop in a fresh process."""
    argv = [str(batch), str(members), str(args.steps_engine), str(args.threads)]
    out = subprocess.run(
        [sys.executable, "-c", ENGINE_CHILD, *argv],
        env=child_env(arm, args.threads or 2),
        cwd=tmp,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.exit(f"error: the {arm.label} arm's engine loop failed:\n{out.stderr[-2000:]}")
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return {"steps/wall-s": float(wall), "steps/cpu-s": float(cpu)}


def first_row_at(proc: subprocess.Popen[bytes], out: Path, t0: float, deadline_s: float = 600) -> float:
    """Seconds from t0 until a metrics.csv under `out` has a row below its header."""
    while time.perf_counter() - t0 < deadline_s:
        for m in out.glob("*/metrics.csv"):
            try:
                if m.read_bytes().count(b"\n") >= 2:
                    return time.perf_counter() - t0
            except OSError:
                pass
        if proc.poll() is not None:
            sys.exit(f"error: the command exited ({proc.returncode}) before writing a row")
        time.sleep(0.005)
    sys.exit("error: no first row within the deadline")


def first_row(arm: Arm, tmp: Path, args: argparse.Namespace, kind: str) -> Figures:
    """`--mode first-row`: the first row of `grok run` (and its whole process) or of `grok tui`."""
    out = tmp / "out"
    out.mkdir()
    extra = [a for s in args.sets for a in ("--set", s)]
    env = child_env(arm, args.threads)
    if kind == "run":
        cmd = [sys.executable, "-m", "grok_tui", "run", "--preset", args.preset, "--steps", "1", *extra]
        cpu, t0 = children_cpu(), time.perf_counter()
        proc = subprocess.Popen([*cmd, "--out", str(out), "--quiet"], env=env, cwd=tmp, stdout=subprocess.DEVNULL)
        row = first_row_at(proc, out, t0)
        proc.wait()
        figures = {"first row s": row, "wall s": time.perf_counter() - t0, "CPU s": children_cpu() - cpu}
    else:
        master, slave = pty.openpty()
        os.set_blocking(master, False)
        env = {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        cmd = [sys.executable, "-m", "grok_tui", "tui", "--preset", args.preset, *extra, "--out", str(out)]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdin=slave, stdout=slave, stderr=slave)
        os.close(slave)
        stop = threading.Event()

        def drain() -> None:  # the app must never block writing to the terminal
            while not stop.is_set():
                try:
                    os.read(master, 65536)
                except BlockingIOError:
                    time.sleep(0.01)
                except OSError:
                    return

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        try:
            figures = {"first row s": first_row_at(proc, out, t0)}
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            stop.set()
            reader.join(timeout=5)
            os.close(master)
    shutil.rmtree(out)
    return figures


def compare(this: Arm, ref: Arm, pairs: int, tag: str, measure: Callable[[Arm], Figures]) -> None:
    """One warm-up each, then `pairs` alternating pairs; each figure's this-vs-ref ratio, above 1 = faster."""
    for arm in (this, ref):
        measure(arm)
    ratios: dict[str, list[float]] = {}
    for i in range(pairs):
        order = (this, ref) if i % 2 == 0 else (ref, this)
        got = {arm.label: measure(arm) for arm in order}
        a, b = got["this"], got["ref"]
        cells = []
        for name in a:
            r = a[name] / b[name] if name in RATES else b[name] / a[name]
            ratios.setdefault(name, []).append(r)
            cells.append(f"{name} this {a[name]:.2f} ref {b[name]:.2f} ({r:.3f}x)")
        print(f"  {tag} pair {i + 1} ({order[0].label} first): " + ", ".join(cells))
    for name, rs in ratios.items():
        med, lo, hi = statistics.median(rs), min(rs), max(rs)
        print(f"{tag}: {name}, this against ref {med:.3f}x (range {lo:.3f}-{hi:.3f}, {len(rs)} pairs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ref", help="the commit to compare against (a hash, tag or branch)")
    ap.add_argument("--mode", choices=("command", "engine", "first-row"), default="command")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--preset", default="random_mul", help="command and first-row modes")
    ap.add_argument("--batches", default="64,512", help="command and engine modes")
    ap.add_argument("--steps", default="", help="command: max_steps per batch (4000,1000); engine: timed steps (200)")
    ap.add_argument("--members", default="0", help="engine: 0 = one Trainer; N = N seeds as one ManyTrainer")
    ap.add_argument("--arms", default="run,tui", help="first-row: run, tui or both")
    ap.add_argument("--threads", type=int, default=1, help="torch threads in both arms; 0 = each arm's default")
    ap.add_argument("--eval-every", type=int, default=1000, help="command mode")
    ap.add_argument("--device", default="cpu", help="train.device in both arms (command mode)")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="a --set for every command (repeat)")
    ap.add_argument("--ref-tree", type=Path, help="REF's tree, already exported (no git history needed)")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    if args.mode == "command":
        steps = [int(s) for s in (args.steps or "4000,1000").split(",")]
        if len(steps) != len(batches):
            sys.exit("error: --steps needs one value per batch size")
    else:
        args.steps_engine = int(args.steps or 200)

    tmp = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    try:
        try:
            head = git("rev-parse", "HEAD")
            dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
        except (OSError, subprocess.CalledProcessError):
            head, dirty = "(no git history here)", ""
        this = Arm("this", ROOT, head)
        if args.ref_tree is not None:
            ref = Arm("ref", args.ref_tree.resolve(), args.ref)
            link_presets(ref.root)
        else:
            ref = Arm("ref", tmp / "ref", "")
            ref.commit = export_tree(args.ref, ref.root)
        print(f"{args.mode}: this tree at {head[:10]}{dirty} against {args.ref} = {ref.commit[:10]}")
        print(f"threads {args.threads or 'default'}, {' '.join(f'--set {s}' for s in args.sets) or 'no --set'}")
        for arm in (this, ref):
            preflight(arm, args.threads, tmp)
        load = os.getloadavg()[0]
        if args.mode == "command":
            print(f"whole `grok run --preset {args.preset}`, device {args.device}, probes off")
            for batch, n in zip(batches, steps, strict=True):
                tag = f"batch {batch}, {n} steps"
                compare(this, ref, args.pairs, tag, lambda arm, b=batch, n=n: grok_run(arm, tmp, args, b, n))
        elif args.mode == "engine":
            for members in (int(m) for m in args.members.split(",")):
                for batch in batches:
                    tag = f"members={members} batch={batch}"
                    compare(
                        this, ref, args.pairs, tag, lambda arm, b=batch, m=members: engine_steps(arm, tmp, args, b, m)
                    )
        else:
            for kind in args.arms.split(","):
                compare(this, ref, args.pairs, kind, lambda arm, k=kind: first_row(arm, tmp, args, k))
        print(
            f"load average (1 min) {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} cores"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
