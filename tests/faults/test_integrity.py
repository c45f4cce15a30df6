"""D1–D3, D5, F12, F13 and durability: one writer per run, no torn or mismatched rows, a clean end on a full disk."""

from __future__ import annotations

import csv
import errno
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest
import torch

from engine.config import ConfigError
from engine.events import RunFinished
from engine.records.run import read_run
from engine.rundir import RunInUse, RunLock, lock_holder, read_csv
from engine.train.run import Run
from tests.conftest import grok, logged_rows, tiny_config
from tests.faults.conftest import TINY_TOML, finished_run, interrupted_run, one_error, summary


def wait_for(cond: Callable[[], object], what: str, deadline_s: float = 120.0) -> None:
    """Poll a fact (a file, a row count) until it holds; fail with `what` at the deadline."""
    end = time.monotonic() + deadline_s
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _long_run(out: Path) -> tuple[subprocess.Popen[str], Path]:
    """`grok run` on the tiny config with a budget it never reaches; returns once it has logged rows."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "grok_tui", "run", "--config", TINY_TOML, "--steps", "10000000", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        wait_for(
            lambda: any(len(read_csv(d / "metrics.csv")) >= 3 for d in out.glob("*")) or proc.poll() is not None,
            "the first rows of the long run",
        )
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        wait_for(lambda: (out / next(out.iterdir()).name / "checkpoint.pt").exists(), "its first checkpoint")
    except BaseException:
        proc.kill()
        proc.communicate(timeout=30)
        raise
    return proc, next(out.iterdir())


def test_d1_a_second_writer_is_refused_and_readers_never_block(tmp_path: Path) -> None:
    proc, d = _long_run(tmp_path / "runs")
    try:
        assert lock_holder(d) == proc.pid
        before = len(read_csv(d / "metrics.csv"))
        r = grok("run", "--resume", str(d), "--steps", "200")
        one_error(r, f"error: {d} is in use by pid {proc.pid}")
        # Readers do not take the lock: show and export work while it trains, and say it is live.
        r = grok("show", str(d))
        assert r.returncode == 0, r.stderr
        assert f"pid {proc.pid}" in r.stdout and "running" in r.stdout
        assert grok("export", str(d)).returncode == 0
        assert read_run(d).status == "running" and read_run(d).pid == proc.pid
        assert len(read_csv(d / "metrics.csv")) >= before
    finally:
        proc.kill()  # SIGKILL: no handler runs, only the kernel releases the lock
        proc.communicate(timeout=30)
    # F12: killed, its summary still says running; show reports the rows' progress and no process.
    assert summary(d)["status"] == "running"
    assert lock_holder(d) is None
    rec = read_run(d)
    rows = read_csv(d / "metrics.csv")
    assert rec.status == "dead" and rec.pid is None and rec.step >= int(rows[-1]["step"]) > 0
    r = grok("show", str(d))
    assert r.returncode == 0, r.stderr
    assert "dead" in r.stdout and f"{rec.step}" in r.stdout and "no process" in r.stdout
    # The lock died with its holder: the run resumes, and its steps are each logged once, in order.
    ckpt_step = int(torch.load(d / "checkpoint.pt", weights_only=True)["step"])
    r = grok("run", "--resume", str(d), "--steps", str(ckpt_step + 40), "--quiet")
    assert r.returncode == 0, r.stderr
    steps = [int(x["step"]) for x in read_csv(d / "metrics.csv")]
    assert steps == sorted(set(steps)) and steps[-1] == ckpt_step + 40


def test_d1_lock_in_process(tmp_path: Path) -> None:
    d = interrupted_run(tmp_path / "runs")
    with RunLock(d):
        with pytest.raises(RunInUse, match=f"is in use by pid {os.getpid()}"):
            Run.from_checkpoint(d, max_steps=80)
        with pytest.raises(RunInUse):
            RunLock(d).acquire()
        assert lock_holder(d) == os.getpid()
    assert lock_holder(d) is None
    run = Run.from_checkpoint(d, max_steps=80)
    assert lock_holder(d) == os.getpid()
    for _ in run.events():
        pass
    assert lock_holder(d) is None  # given back when the run ends


def test_d1_lock_released_by_the_kernel_on_sigkill(tmp_path: Path) -> None:
    d = interrupted_run(tmp_path / "runs")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import sys; from engine.rundir import RunLock; lock = RunLock({str(d)!r}).acquire(); "
            "print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert lock_holder(d) == holder.pid
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=30)
    assert lock_holder(d) is None
    RunLock(d).acquire().release()


def test_d2_a_torn_last_line_is_dropped_on_resume(tmp_path: Path) -> None:
    d = interrupted_run(tmp_path / "runs", stop_at=40)  # checkpoint at 40; rows 0, 20, 40
    with open(d / "metrics.csv", "a") as fh:
        fh.write("5")  # a torn `5...` row: killed mid-write, its step looks like 5 <= 40
    with open(d / "tokens.csv", "a") as fh:
        fh.write("4,1")
    assert [r["step"] for r in read_csv(d / "metrics.csv")] == ["0", "20", "40"]  # readers drop it too
    r = grok("run", "--resume", str(d), "--steps", "60", "--quiet")
    assert r.returncode == 0, r.stderr
    text = (d / "metrics.csv").read_text()
    assert text.endswith("\n")
    assert [r["step"] for r in read_csv(d / "metrics.csv")] == ["0", "20", "40", "60"]
    assert all(r["val_acc"] for r in read_csv(d / "metrics.csv"))
    exported = grok("export", str(d))
    assert exported.returncode == 0 and "\n5," not in exported.stdout


def test_d3_a_config_change_that_alters_columns_is_refused(tmp_path: Path) -> None:
    d = interrupted_run(tmp_path / "runs")
    before = {n: (d / n).read_bytes() for n in ("metrics.csv", "tokens.csv", "summary.json", "checkpoint.pt")}
    doc = json.loads((d / "config.json").read_text())
    doc["probe"]["norm_every"] = 20  # adds columns
    doc["probe"]["rank_every"] = 20
    (d / "config.json").write_text(json.dumps(doc))
    r = grok("run", "--resume", str(d), "--steps", "80")
    one_error(r, "config.json: changed since the checkpoint: probe.norm_every, probe.rank_every")
    assert {n: (d / n).read_bytes() for n in before} == before  # nothing written
    assert grok("show", str(d)).returncode == 0


def test_d3_a_harmless_change_is_allowed_and_recorded(tmp_path: Path) -> None:
    d = interrupted_run(tmp_path / "runs")
    doc = json.loads((d / "config.json").read_text())
    doc["train"]["patience"] = 3
    (d / "config.json").write_text(json.dumps(doc))
    r = grok("run", "--resume", str(d), "--steps", "80", "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads((d / "config.json").read_text())
    assert doc["train"]["max_steps"] == 80 and doc["train"]["patience"] == 3
    (entry,) = doc["_meta"]["resumed"]
    assert entry["step"] == 30
    assert entry["changed"] == {
        "train.max_steps": {"from": 60, "to": 80},
        "train.patience": {"from": 0, "to": 3},
    }
    assert len(read_csv(d / "metrics.csv")[0]) == len(read_csv(d / "metrics.csv")[-1])


class _FullAfter:
    """A file wrapper whose device fills after `budget` more bytes: writes up to it, then ENOSPC."""

    def __init__(self, fh: IO[str], budget: int) -> None:
        self.fh, self.left = fh, budget

    def write(self, s: str) -> int:
        if len(s) > self.left:
            self.fh.write(s[: self.left])
            self.fh.flush()
            self.left = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.left -= len(s)
        return self.fh.write(s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fh, name)


def test_d5_disk_full_writing_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.rundir import RunLog

    real_open = RunLog._open

    def opened(self: RunLog, name: str, header: list[str]) -> tuple[Any, Any]:
        fh, w = real_open(self, name, header)
        if name == "metrics.csv":
            fh = _FullAfter(fh, 600)  # the header and a few rows fit, then the disk is full mid-row
            w = csv.writer(fh)
        return fh, w

    monkeypatch.setattr(RunLog, "_open", opened)
    run = Run(tiny_config(train__max_steps=400), tmp_path / "runs")
    events = list(run.events())
    d = run.dir
    assert run.status == "failed"
    assert run.fault == f"no space left on device writing {d}/metrics.csv"
    assert isinstance(events[-1], RunFinished)
    assert events[-1].error == run.fault
    assert summary(d)["status"] == "failed" and summary(d)["error"] == run.fault  # best effort, written here
    rows = read_csv(d / "metrics.csv")
    assert len(rows) >= 2 and all(r["val_acc"] for r in rows)  # every complete row readable
    assert not (d / "metrics.csv").read_text().endswith("\n")  # the torn row is on disk ...
    assert [r["step"] for r in rows] == [str(20 * i) for i in range(len(rows))]  # ... and never read
    assert not list(d.glob("*.tmp"))
    assert lock_holder(d) is None


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_d5_disk_full_from_the_kernel_writing_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the row at step 40, metrics.csv's descriptor is pointed at /dev/full: the next flush gets a
    real ENOSPC, and closing the file (its buffer still holds the row) fails again without a traceback."""
    from engine.events import EvalLogged, Event
    from engine.rundir import RunLog

    real = RunLog._handle

    def handle(self: RunLog, ev: Event) -> None:
        real(self, ev)
        if isinstance(ev, EvalLogged) and ev.step == 40:
            full = os.open("/dev/full", os.O_WRONLY)
            os.dup2(full, self._files["metrics.csv"][0].fileno())
            os.close(full)

    monkeypatch.setattr(RunLog, "_handle", handle)
    run = Run(tiny_config(train__max_steps=400), tmp_path / "runs")
    for _ in run.events():
        pass
    assert run.status == "failed" and run.fault == f"no space left on device writing {run.dir}/metrics.csv"
    assert [r["step"] for r in read_csv(run.dir / "metrics.csv")] == ["0", "20", "40"]
    assert summary(run.dir)["status"] == "failed"
    assert lock_holder(run.dir) is None


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_d5_disk_full_writing_the_checkpoint(tmp_path: Path) -> None:
    """A real ENOSPC from the kernel: the checkpoint's temp file is a link to /dev/full."""
    d = interrupted_run(tmp_path / "runs", stop_at=30)
    rows_before = read_csv(d / "metrics.csv")
    (d / "checkpoint.pt.tmp").symlink_to("/dev/full")
    r = grok("run", "--resume", str(d), "--steps", "100")
    one_error(r, f"error: no space left on device writing {d}/checkpoint.pt", code=1)
    assert not os.path.lexists(d / "checkpoint.pt.tmp")  # the temp file is gone
    assert summary(d)["status"] == "failed"
    assert read_csv(d / "metrics.csv")[: len(rows_before)] == rows_before
    assert torch.load(d / "checkpoint.pt", weights_only=True)["step"] == 30  # the old one is intact
    assert not (d / "error.txt").exists() or "Traceback" not in (d / "error.txt").read_text()


def test_f13_interrupted_between_evaluations_then_resumed_is_bit_exact(tmp_path: Path) -> None:
    full = finished_run(tmp_path / "a", train__max_steps=100)
    part = interrupted_run(tmp_path / "b", stop_at=30, train__max_steps=100)  # 30: between evaluations
    assert [r["step"] for r in read_csv(part / "metrics.csv")] == ["0", "20"]  # no off-cadence row
    r = grok("run", "--resume", str(part), "--quiet")
    assert r.returncode == 0, r.stderr
    assert logged_rows(full) == logged_rows(part)
    assert (full / "tokens.csv").read_text() == (part / "tokens.csv").read_text()
    keys = ("memorized_step", "generalized_step", "final_train_acc", "final_val_acc", "best_val_acc", "steps")
    assert {k: summary(full)[k] for k in keys} == {k: summary(part)[k] for k in keys}


def test_f13_an_old_off_cadence_row_is_dropped_on_resume(tmp_path: Path) -> None:
    """A run directory from before this fix has a row where it stopped; resume drops it."""
    full = finished_run(tmp_path / "a", train__max_steps=100)
    part = interrupted_run(tmp_path / "b", stop_at=30, train__max_steps=100)
    with open(part / "metrics.csv", "a", newline="") as fh:
        last = list(read_csv(part / "metrics.csv")[-1].values())
        csv.writer(fh).writerow(["30", *last[1:]])
    run = Run.from_checkpoint(part)
    for _ in run.events():
        pass
    assert logged_rows(full) == logged_rows(part)


def test_checkpoint_is_fsynced_around_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = Run(tiny_config(), tmp_path / "runs")
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append("fsync " + os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    def replace(a: str | Path, b: str | Path) -> None:
        calls.append(f"rename {a} -> {b}")
        real_replace(a, b)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    run.checkpoint()
    run.close()
    d = run.dir
    assert calls == [
        f"fsync {d}/checkpoint.pt.tmp",
        f"rename {d}/checkpoint.pt.tmp -> {d}/checkpoint.pt",
        f"fsync {d}",
    ]


def test_readers_name_the_file_of_a_bad_run_directory(tmp_path: Path) -> None:
    d = finished_run(tmp_path / "runs")
    (d / "summary.json").write_text("[1, 2]")
    with pytest.raises(ConfigError, match=r"summary\.json: expected a JSON object"):
        read_run(d)


def test_d3_a_key_added_since_the_checkpoint_compares_at_its_default(tmp_path: Path) -> None:
    """A checkpoint from before a config key existed resumes: the key is at its default on both sides."""
    d = interrupted_run(tmp_path / "runs")
    state = torch.load(d / "checkpoint.pt", weights_only=True)
    del state["config"]["probe"]["rare_k"]  # as written by an engine without probe.rare_k
    torch.save(state, d / "checkpoint.pt")
    run = Run.from_checkpoint(d, max_steps=80)
    for _ in run.events():
        pass
    assert run.status == "finished"


def test_d3_rows_that_do_not_match_the_header_are_an_error_not_a_crash(tmp_path: Path) -> None:
    """A run directory corrupted by an older engine (19-field rows under an 11-column header)."""
    d = finished_run(tmp_path / "runs")
    with open(d / "metrics.csv", "a", newline="") as fh:
        csv.writer(fh).writerow(["80", *["0.5"] * 18])
    n = len((d / "metrics.csv").read_text().splitlines())
    for args in (["show", str(d)], ["export", str(d)]):
        one_error(grok(*args), f"{d}/metrics.csv: row {n} has 19 fields where the header has")


def test_d1_a_reader_probing_the_lock_never_makes_a_writer_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that starts while `grok ls` or the TUI is mid-probe (a shared flock held for an instant)
    waits the probe out instead of reporting the run in use."""
    import fcntl
    import types

    from engine.rundir import lock as runlock

    d = tmp_path / "run"
    d.mkdir()
    RunLock(d).acquire().release()  # the lock file exists, with no pid in it
    probe = open(d / runlock.LOCK_FILE)  # noqa: SIM115 - closed by the writer's first wait below
    fcntl.flock(probe.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)  # what lock_holder holds for an instant
    waits: list[float] = []

    def sleep(s: float) -> None:  # the probe ends while the writer waits
        waits.append(s)
        probe.close()

    monkeypatch.setattr(runlock, "time", types.SimpleNamespace(monotonic=time.monotonic, sleep=sleep))
    with RunLock(d):
        assert lock_holder(d) == os.getpid()
    assert len(waits) == 1
