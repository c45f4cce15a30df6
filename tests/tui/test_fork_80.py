"""The fork in the lab at 80×24, on a real tiny run: start it, fork from the cursor, compare.

After the fork the Training view draws the parent's curve before F and the fork's after it, the cursor
reads the values metrics.csv holds at its step, the form fits the screen and shows its errors whole, and
the fork is written off the event loop."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

import engine.train.fork as fork_module
from engine.rundir.checkpoints import list_kept
from engine.rundir.csvlog import read_metrics
from grok_tui.app import create_app
from grok_tui.charts import views
from grok_tui.charts.canvas import fmt_num
from grok_tui.charts.series import axis_frac
from grok_tui.screens.compare import CompareScreen
from grok_tui.screens.fork_form import ForkForm, snap
from grok_tui.widgets.line_chart import LineChart
from tests.cli.conftest import DATA
from tests.tui.conftest import aio, painted, wait_for

REAL_RUN_S = 240.0  # a deadline for a real run on a loaded machine (a hang still fails)
SETS = ["train.max_steps=300", "train.eval_every=10", "train.keep_every=50", "train.threads=1"]


def _at(rows: list[dict[str, float]], step: float) -> dict[str, float]:
    """The logged row nearest to `step`: what the cursor reads."""
    return min(rows, key=lambda r: abs(r["step"] - step))


def _readout(plot: Any, name: str) -> str:
    """The value a line's label reads at the cursor: `train 0.25` -> `0.25`."""
    label: str = next(ln.label for ln in plot.lines if ln.label.startswith(f"{name} "))
    return label.removeprefix(f"{name} ")


@aio
async def test_fork_at_80x24_shows_the_parents_history_and_reads_the_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    real_fork_run = fork_module.fork_run

    def fork_run(*a: Any, **kw: Any) -> Path:
        threads.append(threading.current_thread())
        return real_fork_run(*a, **kw)

    monkeypatch.setattr(fork_module, "fork_run", fork_run)
    app = create_app(config=str(DATA / "tiny.toml"), sets=SETS, out=tmp_path / "runs")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished", timeout=REAL_RUN_S)
        parent = Path(app.data.run_dir)
        await wait_for(pilot, lambda: painted(app))
        await pilot.press("comma", *["less_than_sign"] * 2)  # the cursor, then 20% of the axis to the left
        cursor = app.axis.cursor_step(float(app.data.max_steps))
        assert cursor is not None
        want = snap([k.step for k in list_kept(parent)], cursor)
        assert want is not None and 0 < want < 300
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkForm))
        form = app.screen
        assert form.query_one("#fork-step", Input).value == str(want)
        assert form.query_one("#fork-box").region.right <= 80  # the whole form, its border included
        for key in ("sets", "intervene"):  # an example is not taken for typed text: `e.g.`, in italics
            field = form.query_one(f"#fork-{key}", Input)
            assert field.value == "" and field.placeholder.startswith("e.g. ")
            assert field.get_component_rich_style("input--placeholder").italic
        # an error is shown whole, folded to the form's width, not cut
        form.query_one("#fork-intervene", Input).value = "rescale"
        await pilot.press("enter")
        error = form.query_one("#fork-error", Static)
        await wait_for(pilot, lambda: "error:" in str(error.render()))
        shown = " ".join(line.text.strip() for line in error.render_lines(error.region.reset_offset))
        assert "expected KIND:WHAT with KIND one of" in shown and "copy" in shown and error.region.right <= 80
        form.query_one("#fork-intervene", Input).value = ""
        form.query_one("#fork-sets", Input).value = "optim.lr_ratio=10"
        await pilot.press("enter")
        forked = lambda: app.screen is app.main_screen and app.data.run_dir != str(parent)  # noqa: E731
        await wait_for(pilot, forked, timeout=REAL_RUN_S)
        await wait_for(pilot, lambda: app.data.status == "finished", timeout=REAL_RUN_S)
        assert threads and all(t is not threading.main_thread() for t in threads)  # off the event loop
        fork = Path(app.data.run_dir)
        await wait_for(pilot, lambda: painted(app))

        # the Training view: the parent's curve before F, the fork's after it, F marked
        plot = app.query_one("#acc", LineChart).source()
        f_x = axis_frac(want, 300, True)
        train = next(ln for ln in plot.lines if ln.label.startswith("train"))
        assert any(p.fx < f_x for p in train.points) and any(p.fx > f_x for p in train.points)
        assert (float(want), "F") in plot.markers
        # the cursor reads metrics.csv at its step: the parent's rows before F, as the fork holds them too
        rows, parent_rows = read_metrics(fork), read_metrics(parent)
        row = _at(rows, cursor)
        assert row["step"] < want and row == _at(parent_rows, cursor)
        assert _readout(plot, "train") == fmt_num(row["train_acc"])
        assert _readout(plot, "val") == fmt_num(row["val_acc"])
        chart = app.query_one("#acc", LineChart)
        text = [s.text for s in chart.render_lines(chart.region.reset_offset)]
        f_col = next(ln.index("F") for ln in text if "F " in ln)  # the marker's column, on the marker row
        drawn_before_f = [c for ln in text[2:-1] for c in ln[8:f_col] if "\u2800" < c <= "\u28ff"]
        assert len(drawn_before_f) > 10, "\n".join(text)  # braille dots of the parent's curves before F

        # the compare view: the parent and the fork, both read at the cursor
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_for(pilot, lambda: len(screen.selected_runs()) == 2)
        assert screen.region.right <= 80
        compare = screen.query_one(LineChart).source()
        assert (float(want), "F") in compare.markers
        drawn = [ln for ln in compare.lines if ln.points]
        assert len(drawn) == 2 and all(any(p.fx < f_x for p in ln.points) for ln in drawn)
        runs = dict((d.run_dir, k) for k, d in screen.selected_runs())
        for d, logged in ((str(parent), parent_rows), (str(fork), rows)):
            want_val = fmt_num(_at(logged, views.Axis(cursor=app.axis.cursor).cursor_step(300.0) or 0)["val_acc"])
            assert _readout(compare, str(runs[d] + 1)) == want_val
