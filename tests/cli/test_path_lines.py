"""A path in a folded line is moved to a line of its own, never cut: the user copies it into the next command."""

from __future__ import annotations

from grok_tui.commands.width import path_line, wrap

LONG = "/srv/lab/" + "a-long-study-folder/" * 3 + "runs/20261129-021814-adamlr_adaptive_once_mul-sweep"


def test_wrap_keeps_a_path_longer_than_the_line_whole() -> None:
    line = f"sweep {LONG}: 2 of 2 members to train, local backend"
    out = wrap(line, 80).splitlines()
    assert any(ln.strip() == f"{LONG}:" for ln in out), out  # whole, on its own line
    assert "…" not in "".join(out)
    assert all(len(ln) <= 80 for ln in out if LONG not in ln)  # every other line fits


def test_a_path_line_that_does_not_fit_puts_the_path_below_its_label() -> None:
    assert path_line("run directory", "runs/x", 80) == "run directory: runs/x"
    assert path_line("group directory", LONG, 80) == f"group directory:\n  {LONG}"
