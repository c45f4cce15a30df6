"""`grok` skips the interpreter's teardown once torch is loaded, and exits as SystemExit would
(grok_tui/cli.py: exit_without_teardown): the code, the atexit handlers, both streams flushed, a
message for a string code, and a wait for a non-daemon thread that is still running."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

SCRIPT = """
import atexit, sys, threading
{imports}
from grok_tui.cli import exit_without_teardown
atexit.register(lambda: print("atexit ran"))
sys.stdout.write("buffered, not flushed; ")
sys.stderr.write("err; ")
{thread}
exit_without_teardown({code})
"""

LATE_THREAD = """
import time
def late():
    time.sleep(0.2)
    print("thread done")
threading.Thread(target=late).start()
"""


def run(code: str, imports: str = "import torch", thread: str = "") -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(SCRIPT.format(imports=imports, thread=thread, code=code))
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(("code", "rc"), [("0", 0), ("None", 0), ("2", 2)])
def test_code_handlers_and_streams(code: str, rc: int) -> None:
    proc = run(code)
    assert proc.returncode == rc
    assert proc.stdout == "buffered, not flushed; atexit ran\n"
    assert proc.stderr == "err; "


def test_a_string_code_is_printed_and_exits_1() -> None:
    proc = run("'error: no such run'")
    assert proc.returncode == 1
    assert proc.stderr == "err; error: no such run\n"


def test_a_running_non_daemon_thread_is_waited_for() -> None:
    proc = run("0", thread=LATE_THREAD)
    assert proc.returncode == 0
    assert "thread done" in proc.stdout and "atexit ran" in proc.stdout


def test_without_torch_it_is_the_ordinary_exit() -> None:
    proc = run("4", imports="")
    assert proc.returncode == 4
    assert proc.stdout == "buffered, not flushed; atexit ran\n"
