"""`grok tui` / `grok-tui` options: the same as `grok run`, bad input is one line and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from grok_tui.cli import app


def test_grok_tui_help_lists_run_options() -> None:
    out = CliRunner().invoke(app, ["tui", "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"}).output
    for opt in ("--preset", "--config", "--set", "--seed", "--steps", "--device", "--out", "--open", "--compare"):
        assert opt in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--preset", "skewd_mul"], "unknown preset 'skewd_mul'; did you mean skewed_mul"),
        (["--preset", "skewed_mul", "--set", "optim.lr=-1"], "optim.lr: must be > 0"),
        (["--preset", "skewed_mul", "--set", "optim.nope=1"], "unknown config key 'optim.nope'"),
        (["--open", "no/such/run"], "no/such/run: no such directory"),
        (["--compare", "no/such/run"], "no/such/run: no such directory"),
        (["stray"], "RUN_DIRs go after --compare"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], message: str) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    code = "from grok_tui.cli import tui_main; tui_main()"
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: ")
