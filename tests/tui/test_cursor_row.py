"""The cursor names the row it reads: its `@ step N` label (and its ▼) stand at the step of the logged row whose
values the legend shows, never at a screen column's step that was not evaluated; in the lab and in compare, on
the log axis and on the linear one (docs/TUI.md, the cursor)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.rundir.csvlog import read_metrics
from grok_tui.app import create_app
from grok_tui.charts.canvas import fmt_num, fmt_step
from grok_tui.screens.compare import CompareScreen
from grok_tui.widgets.line_chart import LineChart
from tests.cli.conftest import DATA
from tests.tui.conftest import aio, painted, wait_for

MOVES = ("less_than_sign", "comma", "less_than_sign", "greater_than_sign", "full_stop", "greater_than_sign")


def _readout(plot: Any, name: str) -> str:
    label: str = next(ln.label for ln in plot.lines if ln.label.startswith(f"{name} "))
    return label.removeprefix(f"{name} ")


def _shown(chart: LineChart) -> str:
    return "\n".join(s.text for s in chart.render_lines(chart.region.reset_offset))


@pytest.mark.parametrize("log_x", [True, False], ids=["log", "linear"])
@aio
async def test_the_cursor_label_is_the_step_of_the_row_it_reads(tmp_path: Path, scripted, log_x: bool) -> None:
    # 41 log-spaced evaluations over 10,000 steps (tests/tui/conftest.py script): most screen columns fall
    # between two rows, so a label at the cursor's own step would name a step never evaluated
    app = create_app(config=str(DATA / "tiny.toml"), out=tmp_path / "runs", steps=10000, run_factory=scripted())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        rows = {r["step"]: r for r in read_metrics(Path(app.data.run_dir))}
        if app.axis.log != log_x:
            await pilot.press("l")
        assert app.axis.log == log_x
        await pilot.press("comma")
        between = 0
        for key in MOVES:
            await wait_for(pilot, lambda: painted(app))
            cursor = app.axis.cursor_step(float(app.data.max_steps))
            between += cursor not in rows
            chart = app.query_one("#acc", LineChart)
            plot = chart.source()
            assert plot.cursor in rows, (cursor, plot.cursor)
            row = rows[plot.cursor]
            assert _readout(plot, "train") == fmt_num(row["train_acc"])
            assert _readout(plot, "val") == fmt_num(row["val_acc"])
            assert f"@ step {fmt_step(plot.cursor)}" in _shown(chart)
            await pilot.press(key)
        assert between  # the cursor did stand between rows

        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_for(pilot, lambda: len(screen.selected_runs()) == 1)
        chart = screen.query_one(LineChart)
        await wait_for(pilot, lambda: chart.source().cursor is not None)
        plot = chart.source()
        assert plot.cursor in rows
        assert _readout(plot, "1") == fmt_num(rows[plot.cursor]["val_acc"])
