"""A real `grok-tui` under a pseudo-terminal: SIGHUP and SIGTERM close the run as `q` does."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest
import torch

TINY = ["data.p=7", "model.d_embed=8", "train.batch_size=16", "train.eval_every=50", "train.device=cpu"]


def _wait(cond, timeout: float, what: str, screen: bytearray) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out waiting for {what}; the terminal showed:\n" + screen.decode(errors="replace")[-3000:]
            )
        time.sleep(0.05)


def _rows(run_dir: Path) -> list[str]:
    path = run_dir / "metrics.csv"
    return path.read_text().splitlines()[1:] if path.exists() else []


def _own_terminal() -> None:
    """In the child: a new session whose controlling terminal is the pty, so closing it hangs up."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@pytest.mark.parametrize("how", ["SIGHUP", "SIGTERM", "hangup"])
def test_signal_closes_the_run_interrupted_with_a_checkpoint_at_the_current_step(tmp_path: Path, how: str) -> None:
    """SIGHUP and SIGTERM sent to the app, and a real hangup (the terminal closed under it, as a
    dropped SSH connection or `tmux kill-session` does)."""
    sig = signal.SIGTERM if how == "SIGTERM" else signal.SIGHUP
    out = tmp_path / "runs"
    sets = [a for s in [*TINY, "train.checkpoint_every=10000000"] for a in ("--set", s)]
    args = ["--preset", "skewed_mul", *sets, "--steps", "100000000", "--out", str(out)]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "NO_COLOR": "1"}
    code = "from grok_tui.cli import tui_main; tui_main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=slave, stdout=slave, stderr=slave, env=env, preexec_fn=_own_terminal
    )
    os.close(slave)
    seen = bytearray()
    stop_reading = threading.Event()

    def drain() -> None:  # the app blocks if nobody reads its screen
        while not stop_reading.is_set():
            if not select.select([master], [], [], 0.1)[0]:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    closed = False
    try:
        _wait(lambda: out.is_dir() and any(out.iterdir()), 60, "the run directory", seen)
        run_dir = next(out.iterdir())
        _wait(lambda: len(_rows(run_dir)) >= 3, 120, "three metrics rows", seen)
        assert not (run_dir / "checkpoint.pt").exists()  # checkpoint_every is far away
        if how == "hangup":
            stop_reading.set()
            reader.join(timeout=10)
            os.close(master)  # the terminal goes away: the kernel sends SIGHUP to the app's session
            closed = True
        else:
            os.kill(proc.pid, sig)
        rc = proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        stop_reading.set()
        reader.join(timeout=10)
        if not closed:
            os.close(master)
    text = seen.decode("utf-8", "replace")
    assert rc == 128 + sig, text[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    ckpt = torch.load(run_dir / "checkpoint.pt", map_location="cpu", weights_only=True)
    assert ckpt["step"] == summary["steps"] > 0
    # every row kept: one per evaluation (eval_every 50) up to the stop step, none lost or repeated
    steps = [int(r.split(",")[0]) for r in _rows(run_dir)]
    assert steps[: summary["steps"] // 50 + 1] == list(range(0, summary["steps"] + 1, 50))
    assert steps[-1] in (summary["steps"], summary["steps"] // 50 * 50)
    if how == "SIGTERM":  # the terminal is still there: the app says where the run is, as grok run does
        assert f"run directory: {run_dir}" in text and "interrupted" in text
