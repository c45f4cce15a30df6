"""The layers contract in pyproject.toml ([tool.importlinter]) holds, and `lint-imports` fails on an import
that runs up: the check is planted with one in a copy of the source and must break."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed (the test extra)")


def lint(src: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the packages under `src`, with the repository's contracts."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"]
    return subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True, timeout=300)


def copy_sources(dst: Path) -> Path:
    for pkg in ("engine", "grok_tui"):
        shutil.copytree(ROOT / pkg, dst / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.tcss"))
    return dst


def test_the_layers_contract_is_kept() -> None:
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


@pytest.mark.parametrize(
    ("module", "planted"),
    [
        ("engine/config/presets.py", "import engine.sweep.spec\n"),  # config reaching up to sweep
        ("engine/records/run.py", "import engine.sweep.spec\n"),  # the records reaching up to the sweep
        ("engine/rundir/atomic.py", "def later() -> None:\n    from engine.train import run\n"),  # function-level
        ("engine/models/mlp.py", "import grok_tui.options\n"),  # the engine importing a face
        ("engine/status.py", "import textual\n"),  # the engine importing a UI library
    ],
)
def test_lint_imports_fails_on_a_planted_upward_import(tmp_path: Path, module: str, planted: str) -> None:
    """The check itself can fail: an import that runs up the order, planted in a copy, breaks a contract."""
    src = copy_sources(tmp_path)
    f = src / module
    f.write_text(f.read_text() + "\n\n" + planted)
    r = lint(src)
    assert r.returncode != 0, r.stdout[-4000:]
    assert "BROKEN" in r.stdout and module.removesuffix(".py").replace("/", ".") in r.stdout
