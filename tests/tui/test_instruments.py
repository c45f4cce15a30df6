"""The charts as instruments: markers, cursor readout, zoom, smoothing, the time scrubber, the 60x20 layout."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from engine.config import ConfigError
from grok_tui.app import create_app
from grok_tui.charts.series import ema
from grok_tui.widgets.chart import Chart
from tests.tui.conftest import aio, painted, wait_for


def _app(tmp_path: Path, factory, **kw):
    return create_app("skewed_mul", out=tmp_path / "runs", steps=10000, run_factory=factory, **kw)


async def _drawn(pilot, chart: Chart, cond) -> None:
    pilot.app.redraw(force=True)
    await wait_for(pilot, lambda: cond(chart.shown))


@aio
async def test_phase_markers_sit_above_the_plot_with_their_step(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        acc = app.query_one("#acc", Chart)
        m, g = app.data.phases.memorized_step, app.data.phases.generalized_step

        def row(s: str) -> str:  # between legend and plot
            return s.split("\n")[1] if "\n" in s else ""

        # no curve reaches that row, so both letters and their steps are always readable
        await _drawn(pilot, acc, lambda s: f"M {m:,}" in row(s) and (f"G {g:,}" in row(s) or f"{g:,} G" in row(s)))
        assert "┊" in acc.shown  # and a dotted line down the plot at each


@aio
async def test_cursor_reads_every_series_at_one_step_on_every_chart_of_the_view(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        await pilot.press("full_stop")  # the first key shows the cursor, in the middle of the axis
        assert app.axis.cursor == 0.5
        await pilot.press("greater_than_sign", "comma")
        assert app.axis.cursor == pytest.approx(0.59)
        step = app.axis.cursor_step(app.data.max_steps)
        for chart_id, col in (("#acc", "val_acc"), ("#loss", "val_loss")):
            plot = app.query_one(chart_id, Chart).source()
            x, y = app.data.raw[col].at(step)
            assert abs(x - step) <= max(abs(s - step) for s in app.data.raw[col].xs)  # the nearest row
            assert plot.cursor == x  # the cursor stands at the row it reads (tests/tui/test_cursor_row.py)
            val = next(ln.label for ln in plot.lines if ln.label.startswith("val "))
            assert val.split()[-1] == f"{y:.3g}"
        acc = app.query_one("#acc", Chart)
        await _drawn(pilot, acc, lambda s: s.startswith("@ step"))
        assert "▼" in acc.shown.split("\n")[1] and "│" in acc.shown
        await pilot.press("escape")
        assert app.axis.cursor is None


@aio
async def test_zoom_in_around_the_cursor_and_back(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        await pilot.press("l")  # linear: the window halves around the cursor
        await pilot.press("full_stop", "z")
        lo, hi = app.axis.window
        assert (lo, hi) == pytest.approx((2500, 7500))
        plot = app.query_one("#acc", Chart).source()
        assert (plot.x_lo, plot.x_max) == pytest.approx((2500, 7500))
        fxs = [p.fx for ln in plot.lines for p in ln.points]
        assert fxs and min(fxs) >= 0 and max(fxs) <= 1
        rows_in = [s for s in app.data.raw["val_acc"].xs if 2500 <= s <= 7500]
        val = next(ln for ln in plot.lines if ln.label.startswith("val "))
        assert len(val.points) == len(rows_in)  # every row inside the window, drawn at full resolution
        acc = app.query_one("#acc", Chart)
        await _drawn(pilot, acc, lambda s: s.split("\n")[-1].rstrip().endswith("7,500"))  # the end tick
        await pilot.press("Z")
        assert app.axis.window is None and app.query_one("#acc", Chart).source().x_lo == 0


@aio
async def test_smoothing_draws_the_ema_over_the_raw_curve_faint(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        await pilot.press("m")
        assert app.axis.smooth == 0.6
        plot = app.query_one("#loss", Chart).source()
        faint = [ln for ln in plot.lines if not ln.label]
        assert len(faint) == 2 and all(ln.color.startswith("dim ") for ln in faint)  # raw train and val
        raw = app.data.raw["val_loss"]
        smooth = ema(raw.ys, 0.6)
        val = next(ln for ln in plot.lines if ln.label == "val")
        assert val.points[-1].last == pytest.approx(smooth[-1])
        assert faint[1].points[-1].last == pytest.approx(raw.ys[-1])
        assert "EMA 0.6" in plot.title
        await pilot.press("m", "m")
        assert app.axis.smooth == 0 and not [ln for ln in app.query_one("#loss", Chart).source().lines if not ln.label]


@aio
async def test_scrubber_redraws_tokens_heat_map_and_spectrum_as_logged(tmp_path: Path, scripted) -> None:
    """On a finished run opened with --open: the bars at a scrubbed step are tokens.csv's row of that step."""
    factory = scripted()
    app = _app(tmp_path, factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
    run_dir = factory.runs[0].dir
    by_step: dict[int, list[int]] = {}
    with open(run_dir / "tokens.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            by_step.setdefault(int(r["step"]), []).append(int(r["updates"]))
    opened = create_app(open_dir=str(run_dir))
    async with opened.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: painted(opened))
        steps = sorted(by_step)
        await pilot.press("left_square_bracket")
        assert opened.scrub == steps[-2]
        for _ in range(5):
            await pilot.press("left_square_bracket")
        at = opened.scrub
        assert at == steps[-7]
        spec = opened.query_one("#tokens", Chart).source()
        counts = by_step[at]
        p = len(counts) - 2
        mean = sum(counts[:p]) / p
        assert spec["values"] == [pytest.approx(c / mean) for c in counts[:p]]
        assert "(scrubbed)" in spec["title"] and f"step {at:,}" in spec["legend"]
        heat = opened.query_one("#heat", Chart).source()
        assert heat["frames"] and heat["frames"][-1][0] == at and all(s <= at for s, _ in heat["frames"])
        fourier = opened.query_one("#fourier", Chart).source()
        assert fourier["legend"].startswith(f"step {at:,}")  # then where its y axis starts
        acc = opened.query_one("#acc", Chart).source()  # the step charts' cursor follows the scrubber
        assert acc.cursor == pytest.approx(at, rel=1e-6)
        hit = opened.data.raw["val_acc"].at(acc.cursor)
        assert hit is not None
        assert hit[0] == at and f"val {hit[1]:.3g}" in [ln.label for ln in acc.lines]
        for _ in range(7):
            await pilot.press("right_square_bracket")  # past the last evaluation: follows the run again
        assert opened.scrub is None


@aio
async def test_scrubber_works_on_a_live_run(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted(hold=True))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        await pilot.press("left_square_bracket", "left_square_bracket")
        at = app.scrub
        assert at is not None and app.data.live
        assert app.query_one("#tokens", Chart).source()["legend"].startswith(f"step {at:,}")
        await pilot.press("q")


@aio
async def test_60x20_keeps_status_step_val_and_the_help_and_quit_keys(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted(hold=True))
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        await wait_for(pilot, lambda: "step 10,000/10,000" in app.status_bar.shown)
        first = app.status_bar.shown.split("\n")[0]
        assert len(first) <= 60
        assert first.startswith(" RUNNING ") and "step 10,000/10,000" in first and "val 0." in first
        assert "ETA" in first
        footer = app.screen.query_one("Footer")
        keys = [b.key_display for b in footer.query("FooterKey").results()]
        shown = [k for k, w in zip(keys, footer.query("FooterKey"), strict=True) if w.region.right <= 60]
        assert "?" in shown and "q" in shown
        await pilot.press("q")


@aio
async def test_idle_screen_says_which_key_starts_a_run(tmp_path: Path, scripted) -> None:
    app = create_app(out=tmp_path / "runs", run_factory=scripted())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("escape")  # leave the picker without a run
        await wait_for(pilot, lambda: "IDLE" in app.status_bar.plain)
        assert "IDLE" in app.status_bar.plain and "press n to start one" in app.status_bar.plain
        assert "press n to start one" in app.query_one("#acc", Chart).source().note


def test_compare_on_a_run_whose_config_changed_under_it_is_one_line(tmp_path: Path) -> None:
    """Issue 13 F11: a metrics.csv whose rows outgrew its header (a probe added to config.json and
    resumed) is a ConfigError naming the file, before any screen opens."""
    run = tmp_path / "r"
    run.mkdir()
    (run / "config.json").write_text('{"preset": "x"}')
    (run / "metrics.csv").write_text("step,val_acc\n0,0.1\n100,0.2,0.3,0.4\n")
    with pytest.raises(ConfigError, match=r"metrics.csv: row 3 has 4 fields"):
        create_app(out=tmp_path, compare=[str(run)])


def test_control_characters_from_a_run_directory_never_reach_the_screen(tmp_path: Path) -> None:
    from grok_tui.rundata import load_run
    from grok_tui.widgets.status_bar import status_text

    run = tmp_path / "r"
    run.mkdir()
    (run / "config.json").write_text('{"preset": "\\u001b]0;PWNED\\u0007evil", "train": {"max_steps": 10}}')
    (run / "metrics.csv").write_text("step,train_acc,val_acc\n0,0.5,0.25\n")
    (run / "summary.json").write_text('{"status": "failed", "error": "\\u001b[31mred", "device": "c\\u001b[2Jpu"}')
    data = load_run(run)
    text = status_text(data).plain
    assert "\x1b" not in text and "\x07" not in text
    assert "]0;PWNEDevil" in text and data.status == "failed" and data.error == "[31mred"
    # a status outside the known names is refused on read, its control characters escaped
    # (tests/faults/test_reading.py)
    (run / "summary.json").write_text('{"status": "fin\\u001b[2Jished"}')
    with pytest.raises(ConfigError, match=r"summary.json: status: must be one of .*found 'fin\\x1b\[2Jished'"):
        load_run(run)
    assert not any(ord(c) < 32 for c in data.preset + data.status + data.error)
    assert math.isclose(data.latest("val_acc"), 0.25)


def test_open_a_dead_run_takes_its_phases_from_the_rows_by_the_engines_rule(tmp_path: Path) -> None:
    """A run killed without closing (summary still 'running', no process holds it) shows as dead,
    with the phases engine/train/phases.py finds in its rows."""
    from grok_tui.rundata import load_run

    run = tmp_path / "r"
    run.mkdir()
    (run / "config.json").write_text('{"preset": "x", "train": {"max_steps": 300, "target_val_acc": 1.0}}')
    rows = "".join(f"{s},{t},{v},0.1\n" for s, t, v in ((0, 0.1, 0.0), (100, 0.995, 0.2), (200, 1.0, 0.96)))
    (run / "metrics.csv").write_text("step,train_acc,val_acc,train_loss\n" + rows)
    (run / "summary.json").write_text('{"status": "running", "steps": 0}')
    data = load_run(run)
    assert data.status == "dead" and data.step == 200
    assert (data.phases.memorized_step, data.phases.generalized_step) == (100, 200)
