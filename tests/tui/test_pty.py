"""ctrl+c in `grok-tui` on a real terminal (a pty): the app reads it as a key, not as SIGINT, and still
exits with 130 = 128 + SIGINT, as the README's table of exit codes says and `grok run` does."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

DEADLINE_S = 90.0  # the app's start imports textual and the engine's config: seconds on a loaded machine


def _read_until(fd: int, needle: bytes, proc: subprocess.Popen[bytes], deadline: float) -> bytes:
    seen = b""
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            raise AssertionError(f"no {needle!r} from the app (exit {proc.poll()}): {seen[-400:]!r}")
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the slave side closed: the process ended
                continue
    return seen


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
def test_ctrl_c_in_the_tui_exits_130(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # an 80×24 terminal
    env = {**os.environ, "TERM": "xterm-256color"}
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    # no preset: the picker opens and nothing trains, so the test costs only the app's start
    proc = subprocess.Popen(
        [sys.executable, "-m", "grok_tui", "tui", "--out", str(tmp_path / "runs")],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,  # the pty is its controlling terminal, as in a shell
        close_fds=True,
    )
    os.close(slave)
    try:
        deadline = time.monotonic() + DEADLINE_S
        _read_until(master, b"skewed_mul", proc, deadline)  # the picker is drawn: keys are read now
        os.write(master, b"\x03")  # ctrl+c, as the terminal sends it
        end = time.monotonic() + DEADLINE_S
        while proc.poll() is None and time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                with contextlib.suppress(OSError):
                    os.read(master, 65536)  # keep the pty drained, so the app's last writes never block
        assert proc.poll() is not None, "the app did not exit after ctrl+c"
        assert proc.returncode == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        os.close(master)
