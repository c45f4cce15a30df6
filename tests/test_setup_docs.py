"""The set-up a new user meets: README's Quickstart says how to reach `grok` after `make run`, where the
CPU-only torch goes and what Ctrl-C under make prints; docs/API.md names the extra matplotlib needs;
docs/FORK.md's examples fit the flagship's split."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_quickstart_says_how_to_reach_grok_the_cpu_wheel_and_ctrl_c() -> None:
    quick = " ".join(_section((ROOT / "README.md").read_text(), "Quickstart").split())
    assert ".venv/bin/grok" in quick and ". .venv/bin/activate" in quick
    assert "TORCH_INDEX=" in quick and "CPU" in quick
    assert "Error 130" in quick and "exit 2" in quick


def test_the_api_page_names_the_figures_extra_where_it_uses_matplotlib() -> None:
    api = (ROOT / "docs" / "API.md").read_text()
    before = api.split("import matplotlib", 1)[0][-300:]  # the paragraph before the code
    assert "[figures]" in before, before


def test_fork_docs_use_a_token_set_the_flagship_has_in_the_lab() -> None:
    lab = _section((ROOT / "docs" / "FORK.md").read_text(), "In the TUI")
    assert not re.search(r"targets=ring|E\[targets\]", lab), lab
