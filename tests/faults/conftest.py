"""Fault tests (issue 13): each reproduces one bad input or injected fault and asserts its one-line error."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engine.train.run import Run
from tests.conftest import grok, tiny_config

DATA = Path(__file__).resolve().parent.parent / "data"
TINY_TOML = str(DATA / "tiny.toml")


def one_error(r: subprocess.CompletedProcess[str], *parts: str, code: int = 2) -> str:
    """Assert exit `code` and exactly one `error: ...` message holding every part, and no traceback; a message
    longer than the terminal is folded, its continuation lines indented (grok_tui/errors.py error_text)."""
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    errors: list[str] = []
    for line in r.stderr.splitlines():
        if line.startswith("error:"):
            errors.append(line)
        elif errors and line.startswith("  "):
            errors[-1] += " " + line.strip()
    assert len(errors) == 1, r.stderr
    for part in parts:
        assert part in errors[0], (part, errors[0])
    return errors[0]


def finished_run(root: Path, **over: object) -> Path:
    """A tiny run trained to its end in this process (p = 11, 60 steps)."""
    run = Run(tiny_config(**over), root)
    for _ in run.events():
        pass
    assert run.status == "finished"
    return run.dir


def interrupted_run(root: Path, stop_at: int = 30, **over: object) -> Path:
    """A tiny run stopped at `stop_at` (a checkpoint there, summary `interrupted`)."""
    from engine.events import StepsTaken

    run = Run(tiny_config(**over), root)
    for ev in run.events():
        if isinstance(ev, StepsTaken) and ev.step >= stop_at:
            run.stop("interrupted")
    assert run.status == "interrupted"
    return run.dir


def summary(d: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((d / "summary.json").read_text())
    return doc


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return finished_run(tmp_path / "runs")


def resume_error(d: Path, *parts: str, cli: bool) -> None:
    """`grok run --resume d --steps 80` fails with one error line holding `parts`: through the CLI in a
    subprocess, or (for the other cases of a parametrized test, to keep the suite fast) through
    Run.from_checkpoint, whose ConfigError is the line the CLI prints."""
    from engine.config import ConfigError

    if cli:
        one_error(grok("run", "--resume", str(d), "--steps", "80"), *parts)
        return
    with pytest.raises(ConfigError) as e:
        Run.from_checkpoint(d, max_steps=80)
    for part in parts:
        assert part in f"error: {e.value}", (part, str(e.value))
