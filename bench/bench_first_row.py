"""Time to the first row: from starting a command to its step-0 evaluation row in metrics.csv.

The whole process is timed from outside, as a user waits for it: interpreter start, imports, data and
model set-up, the first evaluation with the probes due at step 0, the row written. The run directory
is polled every 5 ms. Arms, alternating, each against REF's tree (exported as bench_vs_commit.py does):

- `run`: `grok run --preset PRESET --steps 1 --quiet`: the first row, and the whole process to its exit;
- `tui`: `grok tui --preset PRESET` on a pseudo-terminal (120x40), stopped once its first row is on
  disk; the app draws that row at its next redraw tick (5 per second, grok_tui/app.py).

    python bench/bench_first_row.py REF [--preset random_mul] [--pairs 3] [--arms run,tui] [--set k=v ...]
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

from bench_vs_commit import ROOT, Arm, child_env, export_tree, git, preflight


def first_row(proc: subprocess.Popen[bytes], out: Path, t0: float, deadline_s: float = 600) -> float:
    """Seconds from t0 until a metrics.csv under `out` has a row below its header."""
    while time.perf_counter() - t0 < deadline_s:
        for m in out.glob("*/metrics.csv"):
            try:
                if m.read_bytes().count(b"\n") >= 2:
                    return time.perf_counter() - t0
            except OSError:
                pass
        if proc.poll() is not None:
            raise SystemExit(f"error: the command exited ({proc.returncode}) before writing a row")
        time.sleep(0.005)
    raise SystemExit("error: no first row within the deadline")


def run_arm(arm: Arm, kind: str, preset: str, sets: list[str], threads: int, tmp: Path) -> tuple[float, float, float]:
    """(first row s, whole process s, its CPU s); the last two are NaN for the TUI, which is stopped."""
    out = tmp / "out"
    out.mkdir()
    extra = [a for s in sets for a in ("--set", s)]
    env = child_env(arm, threads)
    if kind == "run":
        cmd = [sys.executable, "-m", "grok_tui", "run", "--preset", preset, "--steps", "1", *extra]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.Popen([*cmd, "--out", str(out), "--quiet"], env=env, cwd=tmp, stdout=subprocess.DEVNULL)
        row = first_row(proc, out, t0)
        proc.wait()
        whole = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    else:
        master, slave = pty.openpty()
        os.set_blocking(master, False)
        env = {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        cmd = [sys.executable, "-m", "grok_tui", "tui", "--preset", preset, *extra, "--out", str(out)]
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
            row = first_row(proc, out, t0)
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
        whole = cpu = float("nan")
    shutil.rmtree(out)
    return row, whole, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ref")
    ap.add_argument("--preset", default="random_mul")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--arms", default="run,tui")
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS for both trees; 0 = unset")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="a --set for every command")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-first-row-"))
    try:
        this = Arm("this", ROOT, git("rev-parse", "HEAD"))
        ref = Arm("ref", tmp / "ref", "")
        ref.commit = export_tree(args.ref, ref.root)
        for arm in (this, ref):
            preflight(arm, args.threads, tmp)
        sets = " ".join(f"--set {s}" for s in args.sets)
        print(f"time to the first row, preset {args.preset} {sets}, OMP_NUM_THREADS {args.threads or 'unset'}")
        load = os.getloadavg()[0]
        for kind in args.arms.split(","):
            for arm in (this, ref):  # warm-up: bytecode, file cache
                run_arm(arm, kind, args.preset, args.sets, args.threads, tmp)
            rows: dict[str, list[float]] = {"this": [], "ref": []}
            for i in range(args.pairs):
                order = (this, ref) if i % 2 == 0 else (ref, this)
                for arm in order:
                    row, whole, cpu = run_arm(arm, kind, args.preset, args.sets, args.threads, tmp)
                    rows[arm.label].append(row)
                    print(
                        f"  {kind} pair {i + 1} {arm.label:>4}: first row {row:5.2f} s, "
                        f"whole process {whole:5.2f} s, {cpu:4.2f} CPU s"
                    )
            a, b = rows["this"], rows["ref"]
            print(
                f"{kind}: first row this {statistics.median(a):.2f} s (range {min(a):.2f}-{max(a):.2f}), "
                f"ref {statistics.median(b):.2f} s (range {min(b):.2f}-{max(b):.2f})"
            )
        print(f"load average (1 min) {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
