"""A reader that stops early (`grok ls --json | head -1`) is not an error: the command says nothing
and exits 0, as `git log | head` does (grok_tui/cli.py: quiet_on_closed_pipe)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.conftest import finished_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    finished_run(root)
    return root


def into_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    """`grok ARGS` writing into a real pipe whose reader has already gone, as after `head -1` exits."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before grok writes a byte: its first write gets EPIPE
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "grok_tui", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "COLUMNS": "120"},
        )
    finally:
        os.close(write)
    _, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


@pytest.mark.parametrize(
    "args",
    [("ls", "--json"), ("ls",), ("show", "RUN"), ("presets",), ("--help",)],
    ids=["ls --json", "ls", "show", "presets", "--help"],
)
def test_a_closed_pipe_is_a_quiet_exit_0(runs: Path, args: tuple[str, ...]) -> None:
    run = next(runs.iterdir())
    args = tuple(str(run) if a == "RUN" else a for a in args)
    if args[0] == "ls":
        args = (*args, str(runs))
    r = into_closed_pipe(*args)
    assert (r.returncode, r.stderr) == (0, "")


def test_a_user_error_on_a_closed_pipe_keeps_its_code_and_line(tmp_path: Path) -> None:
    r = into_closed_pipe("show", str(tmp_path / "nothing"))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "no such directory" in r.stderr
