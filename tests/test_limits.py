"""The limits the code keeps: no module over 500 lines, bench/ at most 8 files, and the linter and type
checker configured to hold the rest (ruff's C901 at max-complexity 15, mypy's strict definition flags)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 500
MAX_BENCH_FILES = 8


def test_no_module_over_500_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for d in ("engine", "grok_tui", "bench")
        for p in sorted((ROOT / d).rglob("*"))
        if p.suffix in (".py", ".sh") and (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these by concept (over {MAX_LINES} lines): {long}"


def test_bench_holds_at_most_8_files() -> None:
    files = sorted(p.name for p in (ROOT / "bench").iterdir() if p.is_file())
    assert len(files) <= MAX_BENCH_FILES, files


def test_linters_enforce_complexity_and_types() -> None:
    """The complexity cap and the typed definitions are kept by ruff and mypy, which CI runs (.ci/run)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    lint = conf["tool"]["ruff"]["lint"]
    assert "C901" in lint["select"]
    assert lint["mccabe"]["max-complexity"] <= 15
    mypy = conf["tool"]["mypy"]
    for flag in ("disallow_untyped_defs", "disallow_incomplete_defs", "warn_return_any", "no_implicit_reexport"):
        assert mypy[flag] is True, flag
    assert set(mypy["files"]) >= {"engine", "grok_tui"}
    hook = (ROOT / ".pre-commit-config.yaml").read_text()
    assert "files: ^((engine|grok_tui)/.*\\.py|pyproject\\.toml)$" in hook
