"""The limits the code keeps: no module over 500 lines, bench/ at most 8 files, and the linter and type
checker configured to hold the rest (ruff's C901 at max-complexity 15, mypy's strict definition flags),
with no way around the complexity cap (no `noqa` that covers C901, no C901 in ruff's ignores)."""

from __future__ import annotations

import io
import re
import tokenize
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 500
NEAR = 450  # within 10% of the cap: a module this long says at its top why it is not split
NEAR_REASON = "# Near the 500-line cap: "  # followed by the reason, in the module's first 20 lines
MAX_BENCH_FILES = 8
SOURCES = ("engine", "grok_tui", "tests", "bench", "presets")

# A noqa directive that silences C901: one naming it (or a prefix of it: C, C9, C90), one naming no code,
# and the file-wide ruff form of both. Only comment tokens are read, so a string holding one is no bypass.
NOQA = re.compile(r"#\s*(?:ruff\s*:\s*)?noqa\b(?P<codes>\s*:[^#\n]*)?", re.IGNORECASE)
CODE = re.compile(r"[A-Z]+[0-9]*")


def _covers_c901(code: str) -> bool:
    return code in ("ALL", "C901") or (code.startswith("C") and "C901".startswith(code))


def noqa_bypasses(text: str) -> list[int]:
    """The lines (1-based) of `text` whose `noqa` comment silences C901."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.COMMENT:
            continue
        for m in NOQA.finditer(tok.string):
            codes = CODE.findall(m["codes"] or "")
            if not codes or any(_covers_c901(c) for c in codes):
                out.append(tok.start[0])
    return sorted(set(out))


def config_bypasses(lint: dict[str, Any]) -> list[str]:
    """The places in ruff's `[tool.ruff.lint]` table that switch C901 off for some or all files."""
    out = [f"{key}: {code}" for key in ("ignore", "extend-ignore") for code in lint.get(key, []) if _covers_c901(code)]
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        for glob, codes in lint.get(key, {}).items():
            out += [f"{key}[{glob}]: {code}" for code in codes if _covers_c901(code)]
    return out


def test_no_module_over_500_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for d in ("engine", "grok_tui", "bench")
        for p in sorted((ROOT / d).rglob("*"))
        if p.suffix in (".py", ".sh") and (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these by concept (over {MAX_LINES} lines): {long}"


def test_a_module_near_the_cap_says_why() -> None:
    near = {
        str(p.relative_to(ROOT)): n
        for d in ("engine", "grok_tui", "bench")
        for p in sorted((ROOT / d).rglob("*.py"))
        if (n := len(lines := p.read_text().splitlines())) > NEAR
        and not any(line.startswith(NEAR_REASON) and len(line) > len(NEAR_REASON) + 10 for line in lines[:20])
    }
    assert not near, f"split these by concept, or give the reason at the top ({NEAR_REASON!r}): {near}"


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
    assert mypy["strict"] is True
    assert not [k for k, v in mypy.items() if k.startswith(("allow_", "disable_")) or v is False], "strict, all of it"
    assert set(mypy["files"]) >= {"engine", "grok_tui"}
    hook = (ROOT / ".pre-commit-config.yaml").read_text()
    assert "files: ^((engine|grok_tui)/.*\\.py|pyproject\\.toml)$" in hook


def test_mypy_checks_the_tests_with_all_but_the_definition_flags() -> None:
    """CI and pre-commit run `mypy tests/` under the same strict flags as the engine, but for the two
    about unannotated definitions (pytest supplies a fixture's arguments): a test's body is still
    checked, a helper it calls is typed, and no other flag is relaxed for it."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (tests,) = [o for o in conf["tool"]["mypy"]["overrides"] if "tests.*" in o["module"]]
    relaxed = {"disallow_untyped_defs", "disallow_incomplete_defs"}
    assert {k: v for k, v in tests.items() if k != "module"} == dict.fromkeys(relaxed, False)
    assert "\n.venv/bin/mypy tests/" in (ROOT / ".ci" / "run").read_text()
    assert "entry: .venv/bin/mypy tests/\n" in (ROOT / ".pre-commit-config.yaml").read_text()


def test_no_noqa_silences_the_complexity_cap() -> None:
    found = {
        str(p.relative_to(ROOT)): lines
        for d in SOURCES
        for p in sorted((ROOT / d).rglob("*.py"))
        if (lines := noqa_bypasses(p.read_text()))
    }
    assert not found, f"split the function instead of silencing C901: {found}"


def test_ruff_config_does_not_switch_the_complexity_cap_off() -> None:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    ruff = conf["tool"]["ruff"]
    found = config_bypasses(ruff["lint"]) + config_bypasses(ruff)  # the old top-level keys too
    assert not found, f"C901 is switched off in pyproject.toml: {found}"


@pytest.mark.parametrize(
    ("line", "bypass"),
    [
        ("def f(x):  # noqa: C901", True),
        ("def f(x):  # noqa: E501, C901 - long and branchy", True),
        ("def f(x):  # NOQA:C90", True),
        ("def f(x):  # noqa", True),
        ("# ruff: noqa: C901", True),
        ("# ruff: noqa", True),
        ("fh = open(p)  # noqa: SIM115 - closed below", False),
        ("x = 1  # noqa: E501", False),
        ("x = 'noqa: C901'", False),
    ],
)
def test_the_noqa_check_finds_a_planted_bypass(line: str, bypass: bool) -> None:
    """The check itself can fail: a planted `noqa` that covers C901 is found, one for another rule is not."""
    assert noqa_bypasses(f"import os\n{line}\n") == ([2] if bypass else [])


def test_the_config_check_finds_a_planted_bypass() -> None:
    """The check itself can fail: pyproject's ruff table with C901 planted in its ignores is refused."""
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert config_bypasses(lint) == []
    planted = tomllib.loads(
        (ROOT / "pyproject.toml")
        .read_text()
        .replace("[tool.ruff.lint.per-file-ignores]\n", '[tool.ruff.lint.per-file-ignores]\n"engine/x.py" = ["C901"]\n')
    )["tool"]["ruff"]["lint"]
    assert config_bypasses(planted) == ["per-file-ignores[engine/x.py]: C901"]
    assert config_bypasses({"extend-ignore": ["C90"], "per-file-ignores": {"a.py": ["E501"]}}) == ["extend-ignore: C90"]
