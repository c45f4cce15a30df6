"""Run the `grok` CLI in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data"


def grok(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "grok_tui", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env
    )


@pytest.fixture
def tiny_toml() -> str:
    return str(DATA / "tiny.toml")
