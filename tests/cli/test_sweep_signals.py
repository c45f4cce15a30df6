"""`grok sweep` under SIGINT, SIGTERM and SIGHUP, sent to the parent or to the whole process group."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.rundir import load_checkpoint
from tests.cli.conftest import DATA, grok

SWEEP = str(DATA / "tiny_sweep.toml")
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process groups from /proc")


class Sweep:
    """`grok sweep` in a session of its own (its pid is the process group id), stdout read by a thread.

    Two workers where a signal must reach a parent and its workers, one where a member only has to be
    caught; a --resume that only has to finish what is missing runs in the test's process (`grok`), with
    one worker: each process imports torch, about 2 CPU-s."""

    def __init__(self, out: Path, *args: str, workers: int = 2) -> None:
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
        cmd = [sys.executable, "-m", "grok_tui", "sweep", *args, "--workers", str(workers)]
        self.err = out / "stderr.txt"
        with open(self.err, "w") as fh:
            self.proc = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=fh, text=True, env=env, start_new_session=True
            )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def started(self) -> list[str]:
        """Run directories of the members that started, from the `start ... -> DIR` lines."""
        return [ln.rsplit("-> ", 1)[1].strip() for ln in list(self.lines) if ln.startswith("start ")]

    def wait_started(self, n: int, timeout: float = 180) -> list[str]:
        deadline = time.monotonic() + timeout
        while len(self.started()) < n:
            assert self.proc.poll() is None, self.stderr()
            assert time.monotonic() < deadline, f"{n} members did not start: {self.lines}"
            time.sleep(0.1)
        return self.started()

    def finish(self, timeout: float = 120) -> int:
        rc = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return rc

    def stdout(self) -> str:
        return "".join(self.lines)

    def stderr(self) -> str:
        return self.err.read_text()

    def kill(self) -> None:
        for pid in alive_in_group(self.proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def alive_in_group(pgid: int) -> list[int]:
    """Processes of process group `pgid` that still run (zombies waiting for a reaper do not count)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        state, _ppid, pgrp = text[text.rindex(")") + 2 :].split()[:3]
        if int(pgrp) == pgid and state not in ("Z", "X"):
            pids.append(int(stat.parent.name))
    return pids


def wait_group_gone(pgid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while alive_in_group(pgid):
        assert time.monotonic() < deadline, f"processes left in the group: {alive_in_group(pgid)}"
        time.sleep(0.2)


def wait_checkpoints(sw: Sweep, g: Path, names: list[str], timeout: float = 180) -> None:
    """Wait until each of these members has written a checkpoint: it trains, past its start-up."""
    deadline = time.monotonic() + timeout
    while not all((g / n / "checkpoint.pt").exists() for n in names):
        assert sw.proc.poll() is None, sw.stderr()
        assert time.monotonic() < deadline, f"no checkpoint in {names}: {sw.lines}"
        time.sleep(0.05)


def group_dir(out: Path) -> Path:
    (g,) = [p for p in out.iterdir() if p.name.endswith("-sweep")]
    return g


def results(g: Path) -> dict[str, dict[str, str]]:
    with open(g / "results.csv", newline="") as fh:
        return {r["run_dir"]: r for r in csv.DictReader(fh)}


@pytest.mark.parametrize(
    ("sig", "to_group"),
    [(signal.SIGHUP, True), (signal.SIGINT, True), (signal.SIGTERM, False)],
    ids=["HUP-group", "INT-group", "TERM-parent"],
)  # SIGINT to the parent alone takes SIGTERM's handler; a terminal's Ctrl-C reaches the group
def test_signal_stops_the_sweep_cleanly(tmp_path: Path, sig: int, to_group: bool) -> None:
    sw = Sweep(tmp_path, "--config", SWEEP, "--seeds", "1", "--steps", "20000", "--out", str(tmp_path))
    try:
        started = sw.wait_started(2)
        wait_checkpoints(sw, group_dir(tmp_path), started)
        if to_group:
            os.killpg(sw.proc.pid, sig)  # a terminal hang-up or `kill -- -PGID`: the workers get it too
        else:
            sw.proc.send_signal(sig)
        assert sw.finish() == 128 + sig, sw.stderr()
        assert "Traceback" not in sw.stderr()
        assert "grok sweep --resume" in sw.stdout()
        rows = results(group_dir(tmp_path))
        assert set(rows) == set(started)  # members never started stay missing
        for run_dir, row in rows.items():
            assert row["status"] == "interrupted" and 0 < int(row["steps"]) < 20000
            d = group_dir(tmp_path) / run_dir
            assert (d / "checkpoint.pt").exists()
            assert json.loads((d / "summary.json").read_text())["status"] == "interrupted"
        wait_group_gone(sw.proc.pid)
    finally:
        sw.kill()


def metrics_rows(d: Path) -> list[dict[str, str]]:
    with open(d / "metrics.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def on_cadence(rows: list[dict[str, str]], every: int = 20) -> dict[int, dict[str, str]]:
    """Evaluation rows by step (tiny_sweep.toml evaluates every 20 steps), the stop step's row aside."""
    return {int(r["step"]): r for r in rows if int(r["step"]) % every == 0}


def test_resume_after_a_group_signal_runs_what_is_missing(tmp_path: Path) -> None:
    """Whatever the timing: a member the signal caught is interrupted and continues from its checkpoint
    in its own directory; one that had finished already is not run again."""
    sw = Sweep(tmp_path, "--config", SWEEP, "--seeds", "1", "--steps", "600", "--out", str(tmp_path), workers=1)
    try:
        sw.wait_started(1)
        os.killpg(sw.proc.pid, signal.SIGTERM)
        assert sw.finish() == 143, sw.stderr()
    finally:
        sw.kill()
    g = group_dir(tmp_path)
    before = results(g)
    assert before and {r["status"] for r in before.values()} <= {"interrupted", "finished"}
    kept = {d: on_cadence(metrics_rows(g / d)) for d, r in before.items() if r["status"] == "interrupted"}
    done = [d for d, r in before.items() if r["status"] == "finished"]
    again = grok("sweep", "--resume", str(g), "--workers", "1", timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"{4 - len(done)} of 4 members to train, " in again.stdout  # finished ones were recorded: not pending
    after = results(g)
    assert len(after) == 4 and {r["status"] for r in after.values()} == {"finished"}
    assert set(before) <= set(after)  # interrupted members continued in their own run directories
    for run_dir, rows in kept.items():
        now = on_cadence(metrics_rows(g / run_dir))
        assert sorted(now) == list(range(0, 601, 20))
        assert all(now[step] == row for step, row in rows.items())  # continued, not rerun: wall_s kept
    assert sorted(p.name for p in g.iterdir() if p.is_dir()) == sorted(after)


@pytest.mark.parametrize("whole_group", [False, True], ids=["parent", "parent-and-workers"])
def test_resume_after_sigkill_adopts_continues_and_leaves_no_orphans(tmp_path: Path, whole_group: bool) -> None:
    """D4: `grok sweep` SIGKILLed (alone, or with its workers) once a member has a checkpoint. On
    --resume a member whose run had ended is adopted from its summary.json, one with a checkpoint
    continues from it, and the group holds exactly one run directory per member."""
    sw = Sweep(tmp_path, "--config", SWEEP, "--seeds", "1", "--steps", "400", "--out", str(tmp_path), workers=1)
    try:
        sw.wait_started(1)
        g = group_dir(tmp_path)
        deadline = time.monotonic() + 180
        while not list(g.glob("*/checkpoint.pt")):
            assert sw.proc.poll() is None, sw.stderr()
            assert time.monotonic() < deadline, "no member wrote a checkpoint"
            time.sleep(0.05)
        if whole_group:
            os.killpg(sw.proc.pid, signal.SIGKILL)  # nobody stops anything: summaries say `running`
        else:
            sw.proc.kill()  # the orphaned workers stop their members as interrupted, then exit
        sw.finish()
        wait_group_gone(sw.proc.pid, timeout=90)
    finally:
        sw.kill()
    recorded = results(g) if (g / "results.csv").exists() else {}
    ended, kept = [], {}
    for d in sorted(p for p in g.iterdir() if p.is_dir()):
        status = json.loads((d / "summary.json").read_text())["status"] if (d / "summary.json").exists() else ""
        if status == "finished":
            ended.append((d.name, (d / "metrics.csv").read_bytes()))
        elif (d / "checkpoint.pt").exists():
            step = load_checkpoint(d)["step"]  # rows past it were written after the last checkpoint
            kept[d.name] = {s: r for s, r in on_cadence(metrics_rows(d)).items() if s <= step}
    assert ended or kept
    again = grok("sweep", "--resume", str(g), "--workers", "1", timeout=300)
    assert again.returncode == 0, again.stderr
    recorded_done = {d for d, r in recorded.items() if r["status"] == "finished"}
    adopted = len({name for name, _ in ended} - recorded_done)  # ended after the last row was recorded
    said = f"{4 - len(recorded_done) - adopted} of 4 members to train"
    said += f", {adopted} already ended (adopted" if adopted else ", "
    assert said in again.stdout
    after = results(g)
    members = json.loads((g / "group.json").read_text())["members"]
    assert sorted(after) == sorted(m["dir"] for m in members)  # each member once, in its planned directory
    assert sorted(p.name for p in g.iterdir() if p.is_dir()) == sorted(after)  # no orphans
    assert {r["status"] for r in after.values()} == {"finished"} and {r["steps"] for r in after.values()} == {"400"}
    for name, data in ended:  # adopted: not trained again
        assert (g / name / "metrics.csv").read_bytes() == data
    for name, rows in kept.items():  # continued from the checkpoint: the rows before it are kept
        now = on_cadence(metrics_rows(g / name))
        assert sorted(now) == list(range(0, 401, 20))
        assert all(now[step] == row for step, row in rows.items())
    export = grok("export", str(g))
    assert export.returncode == 0, export.stderr
    exported = {r["run"] for r in csv.DictReader(io.StringIO(export.stdout))}
    assert exported == set(after)


def test_workers_exit_when_the_parent_is_killed(tmp_path: Path) -> None:
    sw = Sweep(tmp_path, "--config", SWEEP, "--seeds", "1", "--steps", "20000", "--out", str(tmp_path), workers=1)
    try:
        started = sw.wait_started(1)
        wait_checkpoints(sw, group_dir(tmp_path), started)
        assert len(alive_in_group(sw.proc.pid)) >= 2  # the parent and its worker
        sw.proc.kill()  # SIGKILL: no handler runs, nobody sets the stop flag
        sw.finish()
        wait_group_gone(sw.proc.pid, timeout=60)
        g = group_dir(tmp_path)
        for run_dir in started:  # orphaned workers stopped their members cleanly before exiting
            d = g / run_dir
            assert json.loads((d / "summary.json").read_text())["status"] == "interrupted"
            assert (d / "checkpoint.pt").exists()
    finally:
        sw.kill()
