"""The autouse check in tests/conftest.py sees this process's live children, from any thread, and no zombie."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from tests.conftest import _children

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_children_started_on_any_thread_are_seen_until_reaped() -> None:
    procs: list[subprocess.Popen[bytes]] = [subprocess.Popen(SLEEPER)]
    starter = threading.Thread(target=lambda: procs.append(subprocess.Popen(SLEEPER)))
    starter.start()
    starter.join()  # the thread is gone: its child is another thread's now, still this process's
    try:
        assert {p.pid for p in procs} <= set(_children())
        procs[0].kill()
        procs[0].wait()
        assert procs[0].pid not in _children() and procs[1].pid in _children()
        procs[1].kill()
        os.waitid(os.P_PID, procs[1].pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: a zombie
        assert procs[1].pid not in _children()
    finally:
        for p in procs:
            p.kill()
            p.wait()
