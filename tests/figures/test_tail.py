"""The frequency tail's figure (grok_tui/figures/tail.py): a panel per optimizer, a line per recipe."""

from __future__ import annotations

import pytest

from engine.records.group import read_group
from grok_tui.figures.tail import by_decile
from tests.engine.claims.test_recipe_tail import _group


def test_a_panel_per_optimizer_and_a_line_per_recipe_with_the_seeds_range(tmp_path) -> None:
    panels = by_decile(read_group(_group(tmp_path).dir))
    assert [p.title for p in panels] == ["adam", "adamw"]
    adam = {c.label: c for c in panels[0].curves}
    assert list(adam) == ["plain", "lazy rows", "E out of decay"]  # equal rows changes the lr too: left out
    plain = adam["plain"]
    assert plain.x == [float(k) for k in range(1, 11)] and plain.n == 3
    assert plain.y[-1] == pytest.approx(0.551)  # 0.55 + the seeds' mean offset (0, 1, 2) / 1000
    assert plain.lo is not None and plain.hi is not None
    assert plain.lo[-1] == pytest.approx(0.55) and plain.hi[-1] == pytest.approx(0.552)
