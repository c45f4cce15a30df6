"""A real `grok-tui` under a pseudo-terminal: SIGHUP and SIGTERM close the run as `q` does, and while
the terminal is still there the app restores it before it exits."""

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


# What Textual writes when it gives the terminal back (textual/drivers/linux_driver.py)
LEAVE_ALT_SCREEN, SHOW_CURSOR = b"\x1b[?1049l", b"\x1b[?25h"


def _echo(fd: int) -> bool:
    return bool(termios.tcgetattr(fd)[3] & termios.ECHO)


@pytest.mark.parametrize("how", ["SIGHUP", "SIGTERM", "hangup"])
def test_signal_closes_the_run_interrupted_with_a_checkpoint_at_the_current_step(tmp_path: Path, how: str) -> None:
    """SIGHUP and SIGTERM sent to the app (`kill -HUP`, `kill`), and a real hangup (the terminal
    closed under it, as a dropped SSH connection or `tmux kill-session` does).

    With the terminal still there, the app gives it back as it found it: the alternate screen left,
    the cursor shown, echo on again."""
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
    # the test keeps the terminal open (and reads its modes) unless the case is the terminal going away
    tty = os.dup(slave) if how != "hangup" else None
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
    at_signal = 0
    try:
        _wait(lambda: out.is_dir() and any(out.iterdir()), 60, "the run directory", seen)
        run_dir = next(out.iterdir())
        _wait(lambda: len(_rows(run_dir)) >= 3, 120, "three metrics rows", seen)
        assert not (run_dir / "checkpoint.pt").exists()  # checkpoint_every is far away
        if tty is not None:
            assert not _echo(tty) and b"\x1b[?1049h" in seen  # the app owns the terminal: raw, alternate screen
        at_signal = len(seen)
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
        if tty is not None:  # the app has ended: what it wrote last is in the terminal's buffer now
            while select.select([master], [], [], 0)[0]:
                seen.extend(os.read(master, 65536))
            echo = _echo(tty)
            os.close(tty)
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
    if tty is not None:  # the terminal is still there: given back, then told where the run is, as grok run does
        after = bytes(seen[at_signal:])
        assert LEAVE_ALT_SCREEN in after and SHOW_CURSOR in after, after[-500:]
        assert echo, "echo is still off after the app exited"
        assert "run directory:" in text and str(run_dir) in text and "interrupted" in text  # the path whole
