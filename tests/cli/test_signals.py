"""Ctrl-C, SIGTERM, SIGHUP and SIGKILL: every row written stays readable; resume picks up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.rundir import read_csv
from tests.cli.conftest import grok


def start_long_run(out: Path, tiny_toml: str) -> tuple[subprocess.Popen[str], Path]:
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "grok_tui", "run", "--config", tiny_toml, "--steps", "1000000", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.time() + 90
    while time.time() < deadline:
        dirs = list(out.glob("*"))
        if dirs and len(read_csv(dirs[0] / "metrics.csv")) >= 3:
            return proc, dirs[0]
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("run did not start")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_signal_interrupts_cleanly(tmp_path: Path, tiny_toml: str, sig: int, code: int) -> None:
    proc, d = start_long_run(tmp_path, tiny_toml)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, (out, err)
    assert "Traceback" not in err
    assert f"interrupted; resume with:\n  grok run --resume {d}" in out  # the summary ends with its resume command
    summary = json.loads((d / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    rows = read_csv(d / "metrics.csv")
    assert len(rows) >= 3 and all(r["train_acc"] for r in rows)
    assert (d / "checkpoint.pt").exists()
    r = grok("run", "--resume", str(d), "--steps", str(summary["steps"] + 40), "--quiet")
    assert r.returncode == 0, r.stderr
    assert json.loads((d / "summary.json").read_text())["status"] == "finished"


def test_sigkill_leaves_readable_rows_and_resumes(tmp_path: Path, tiny_toml: str) -> None:
    proc, d = start_long_run(tmp_path, tiny_toml)
    deadline = time.time() + 90  # only stops a hang
    while not (d / "checkpoint.pt").exists():  # killed once a checkpoint exists, whenever that is
        assert proc.poll() is None and time.time() < deadline, "no checkpoint"
        time.sleep(0.05)
    proc.kill()
    proc.communicate(timeout=30)
    rows = read_csv(d / "metrics.csv")
    assert len(rows) >= 3 and all(r["val_acc"] != "" for r in rows)
    assert json.loads((d / "summary.json").read_text())["status"] == "running"
    assert (d / "checkpoint.pt").exists()  # checkpoint_every = 20 in tiny.toml
    last = int(rows[-1]["step"])
    r = grok("run", "--resume", str(d), "--steps", str(last + 60), "--quiet")
    assert r.returncode == 0, r.stderr
    steps = [int(x["step"]) for x in read_csv(d / "metrics.csv")]
    assert steps == sorted(set(steps))  # no duplicated rows after the replay
    assert steps[-1] == last + 60


def test_divergence_exits_3_and_keeps_rows(tmp_path: Path, tiny_toml: str) -> None:
    r = grok("run", "--config", tiny_toml, "--set", "optim.name=sgd", "--set", "optim.lr=1e6", "--out", str(tmp_path))
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "diverged" in r.stderr and "Traceback" not in r.stderr
    d = next(tmp_path.glob("*"))
    assert json.loads((d / "summary.json").read_text())["status"] == "diverged"
    assert len(read_csv(d / "metrics.csv")) >= 1
