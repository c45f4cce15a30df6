"""Pilot tests of the lab app, fed by a scripted event stream: every binding, charts, picker, export, quit."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.widgets import Input, OptionList, TabbedContent

from engine.config.presets import load_preset
from engine.config.resolve import resolve
from grok_tui.app import create_app
from grok_tui.screens.compare import CompareScreen
from grok_tui.screens.help import HelpScreen
from grok_tui.screens.picker import PickerScreen
from grok_tui.widgets.chart import Chart
from grok_tui.widgets.status_bar import StatusBar
from tests.tui.conftest import aio, painted, wait_for


def _app(tmp_path: Path, factory, preset: str = "skewed_mul", **kw):
    return create_app(preset, out=tmp_path / "runs", steps=10000, run_factory=factory, **kw)


def _summary(run) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((run.dir / "summary.json").read_text())
    return doc


@aio
async def test_charts_receive_data(tmp_path: Path, scripted) -> None:
    factory = scripted()
    app = _app(tmp_path, factory)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        tabs = app.query_one("#tabs", TabbedContent)
        for pane in ("tab-train", "tab-tokens", "tab-curv", "tab-spectra", "tab-fourier", "tab-all"):
            tabs.active = pane
            await wait_for(pilot, lambda: tabs.active_pane is not None and painted(app))
            for chart in tabs.active_pane.query(Chart):
                if not chart.display:
                    continue
                spec = chart.source()
                lines = getattr(spec, "lines", None)
                if lines is not None:
                    assert lines and all(ln.points for ln in lines), chart.id
                else:
                    assert spec.get("values") or spec.get("frames"), chart.id
                assert chart.draws > 0, chart.id
        ph = app.data.phases
        assert ph.memorized_step is not None and ph.generalized_step is not None
        assert ph.delay == ph.generalized_step - ph.memorized_step
        status = app.query_one(StatusBar).plain
        assert "FINISHED" in status and "skewed_mul" in status and "memorized" in status


@aio
async def test_charts_redraw_on_timer_not_per_event(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted(), redraw_hz=0.01)  # the timer never fires here: the test ticks it
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        acc = app.query_one("#acc", Chart)
        app.redraw()  # the timer's tick
        await wait_for(pilot, lambda: painted(app))
        drawn = acc.draws
        assert drawn < app.data.plot_version  # the events themselves drew nothing
        for _ in range(3):  # more ticks with nothing new: the chart is not drawn again
            app.redraw()
            await pilot.pause()
        assert not acc.stale(app.chart_stamp) and acc.draws == drawn


PROBES_OFF = [f"probe.{k}_every=0" for k in ("hessian", "rank", "grad", "fourier")]


@aio
async def test_probe_off_charts_say_so_with_the_default_cadence_and_the_hint_fits(tmp_path: Path, scripted) -> None:
    from engine.probes import DEFAULT_CADENCES

    app = _app(tmp_path, scripted(probes=False), sets=PROBES_OFF)
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        hint = f"probe off: --set probe.hessian_every={DEFAULT_CADENCES['probe.hessian_every']}"
        assert app.query_one("#curv", Chart).source().note == hint
        assert f"probe.rank_every={DEFAULT_CADENCES['probe.rank_every']}" in app.query_one("#rank", Chart).source().note
        assert "probe.fourier_every" in app.query_one("#fourier", Chart).source()["note"]
        assert "probe.grad_every" in app.query_one("#heat", Chart).source()["note"]
        app.query_one("#tabs", TabbedContent).active = "tab-curv"
        curv = app.query_one("#curv", Chart)
        # at 60 columns the hint wraps inside its chart: every word of it is on screen
        await wait_for(pilot, lambda: "--set probe.hessian_every=" in curv.shown)
        assert f"probe.hessian_every={DEFAULT_CADENCES['probe.hessian_every']}" in curv.shown


@aio
async def test_space_pauses_and_resumes(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted(hold=True))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        await pilot.press("space")
        await wait_for(pilot, lambda: app.data.status == "paused")
        await pilot.press("space")
        await wait_for(pilot, lambda: app.data.status == "running")
        await pilot.press("q")


@aio
async def test_s_finishes_the_run_cleanly(tmp_path: Path, scripted) -> None:
    factory = scripted(hold=True)
    app = _app(tmp_path, factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        await pilot.press("s")
        await wait_for(pilot, lambda: app.data.status == "finished")
    assert _summary(factory.runs[0])["status"] == "finished"


@aio
async def test_r_restarts_with_a_new_seed(tmp_path: Path, scripted) -> None:
    factory = scripted(hold=True)
    app = _app(tmp_path, factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        first = app.data
        await pilot.press("r")
        await wait_for(pilot, lambda: len(factory.runs) == 2 and app.data.step == 10000)
        assert app.data is not first
        assert [r.cfg.train.seed for r in factory.runs] == [0, 1]
        assert factory.runs[1].cfg == resolve(factory.runs[0].cfg, seed=1)  # the one resolver (test_resolve.py)
        await wait_for(pilot, lambda: factory.runs[0].closed)
        assert _summary(factory.runs[0])["status"] == "interrupted"
        await pilot.press("q")


@aio
async def test_n_picker_validates_with_the_engine(tmp_path: Path, scripted) -> None:
    factory = scripted()
    app = create_app(out=tmp_path / "runs", run_factory=factory)  # no preset: the picker opens
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert picker.query_one("#f-data-split", Input).value == "skewed"  # skewed_mul first
        lr = picker.query_one("#f-optim-lr", Input)
        lr.value = "-1"
        lr.focus()
        await pilot.press("enter")
        assert app.screen is picker
        assert "optim.lr: must be > 0" in str(picker.query_one("#picker-error").render())
        lr.value = "fast"
        await pilot.press("enter")
        assert "optim.lr: expected a number" in str(picker.query_one("#picker-error").render())
        op = picker.query_one("#f-data-op", Input)
        op.value = "pow"
        lr.value = "0.01"
        await pilot.press("enter")
        assert "data.op: must be one of" in str(picker.query_one("#picker-error").render())
        op.value = "add"
        lr.value = "0.005"
        picker.query_one("#f-train-max_steps", Input).value = "300"
        assert picker.query_one("#f-probe-hessian_every", Input).value == "2000"  # the preset's instruments
        picker.query_one("#f-probe-hessian_every", Input).value = "0"  # the picker turns a probe off
        picker.query_one("#f-probe-rank_every", Input).value = "50"  # and on at another cadence
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.data.status == "finished")
        cfg = factory.runs[0].cfg
        assert (cfg.optim.lr, cfg.data.op, cfg.train.max_steps, cfg.preset) == (0.005, "add", 300, "skewed_mul")
        assert (cfg.probe.hessian_every, cfg.probe.rank_every, cfg.probe.grad_every) == (0, 50, 100)
        fields = {"optim.lr": "0.005", "data.op": "add", "train.max_steps": "300"}
        fields |= {"probe.hessian_every": "0", "probe.rank_every": "50"}
        assert cfg == resolve(load_preset("skewed_mul"), fields)  # the one resolver (tests/test_resolve.py)
        await pilot.press("n")
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("escape")
        assert app.screen is app.main_screen


@aio
async def test_e_exports_csv(tmp_path: Path, scripted) -> None:
    factory = scripted()
    app = _app(tmp_path, factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        await pilot.press("e")
        await pilot.pause()
    target = app.last_export
    assert target == factory.runs[0].dir.parent / (factory.runs[0].dir.name + ".csv")
    rows = list(csv.DictReader(target.open()))
    assert len(rows) == 41
    assert rows[0]["preset"] == "skewed_mul" and rows[-1]["step"] == "10000"
    assert "hess_E" in rows[0]


@aio
async def test_l_toggles_log_axis_and_o_toggles_loss_and_t_cycles_views(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted())
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        acc = app.query_one("#acc", Chart)
        assert acc.source().x_log
        await wait_for(pilot, lambda: "log └" in acc.shown)  # what the screen shows
        await pilot.press("l")
        assert not acc.source().x_log
        await wait_for(pilot, lambda: "lin └" in acc.shown)
        assert not app.query_one("#loss").display
        await pilot.press("o")
        await pilot.pause()
        assert app.query_one("#loss").display and not app.query_one("#acc").display
        tabs = app.query_one("#tabs", TabbedContent)
        seen = []
        for _ in range(7):
            await pilot.press("t")
            seen.append(tabs.active)
        assert seen == ["tab-tokens", "tab-curv", "tab-spectra", "tab-fourier", "tab-circuit", "tab-all", "tab-train"]


@aio
async def test_help_lists_every_binding(tmp_path: Path, scripted) -> None:
    app = _app(tmp_path, scripted())
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=100, record=True, file=io.StringIO())
        console.print(app.screen.table)
        text = console.export_text()
        for b in app.BINDINGS:
            line = next(ln for ln in text.splitlines() if ln.startswith((b.key_display or b.key) + " "))
            assert b.tooltip in line
        await pilot.press("escape")
        assert app.screen is app.main_screen


@aio
async def test_c_compares_any_column_with_glyphs_stable_colours_and_a_key_list(tmp_path: Path, scripted) -> None:
    factory = scripted()
    app = _app(tmp_path, factory)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        await pilot.press("r")
        await wait_for(pilot, lambda: len(factory.runs) == 2 and app.data.status == "finished")
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        runs = screen.query_one("#runs", OptionList)
        prompts = [str(runs.get_option_at_index(i).prompt) for i in range(runs.option_count)]
        assert prompts[0].startswith("[x] 1 (live run)") and prompts[1].startswith("[ ] 2 ")  # state by glyph

        def drawn() -> list[str]:  # on screen, not taken for markup
            return [runs.render_line(y).text for y in range(3)]

        await wait_for(pilot, lambda: any("[ ] 2 " in line for line in drawn()))
        assert any("[x] 1 (live run)" in line for line in drawn())
        await pilot.press("down")  # the first key moves the highlight
        assert runs.highlighted == 1
        await pilot.press("space")
        assert str(runs.get_option_at_index(1).prompt).startswith("[x] 2 ")
        chart = screen.query_one("#compare-chart", Chart)
        plot = chart.source()
        assert [ln.label for ln in plot.lines] == ["1", "2"] and all(ln.points for ln in plot.lines)
        colors = [ln.color for ln in plot.lines]
        await pilot.press("up", "space")  # the live run off: run 2 keeps its colour and number
        plot = chart.source()
        assert [(ln.label, ln.color) for ln in plot.lines] == [("2", colors[1])]
        assert plot.legend == [f"2 {factory.runs[0].dir.name}"]
        await wait_for(pilot, lambda: factory.runs[0].dir.name[:20] in chart.shown)  # the key list fits
        await pilot.press("y")  # the next column: train accuracy
        assert screen.column == "train_acc" and chart.source().title == "train accuracy"
        for _ in range(3):
            await pilot.press("y")
        assert screen.column == "train_loss" and chart.source().y_log
        await pilot.press("escape")
        assert app.screen is app.main_screen


@aio
async def test_q_mid_run_closes_the_log_interrupted_and_exits(tmp_path: Path, scripted) -> None:
    factory = scripted(hold=True)
    app = _app(tmp_path, factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running)
    run = factory.runs[0]
    assert run.closed and app.worker.is_finished
    assert _summary(run)["status"] == "interrupted"


@aio
async def test_engine_exception_marks_failed_and_app_stays_usable(tmp_path: Path, scripted) -> None:
    factory = scripted(fail_at=5)
    app = _app(tmp_path, factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "failed")
        await wait_for(pilot, lambda: "FAILED" in app.query_one(StatusBar).plain)
        status = app.query_one(StatusBar).plain
        assert "FAILED" in status and "scripted engine fault" in status
        await pilot.press("l")
        await pilot.press("r")  # a fresh run starts, and it fails the same way: still no crash
        await wait_for(pilot, lambda: len(factory.runs) == 2 and app.data.status == "failed")
        assert app.is_running


@aio
async def test_open_browses_a_finished_run(tmp_path: Path, scripted) -> None:
    factory = scripted()
    app = _app(tmp_path, factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
    run_dir = factory.runs[0].dir
    opened = create_app(open_dir=str(run_dir))
    async with opened.run_test() as pilot:
        await wait_for(pilot, lambda: painted(opened))
        assert opened.data.status == "finished" and opened.data.run_dir == str(run_dir)
        assert opened.query_one("#acc", Chart).source().lines[0].points
        assert opened.data.updates and len(opened.data.grad.items) == 41
        await pilot.press("space")  # nothing to pause: a notice, no crash
        assert opened.engine is None


@aio
async def test_a_run_that_cannot_start_is_shown_failed(tmp_path: Path) -> None:
    from engine.config import ConfigError

    def factory(cfg, out):
        raise ConfigError("train.device: cuda requested but CUDA is not available")

    app = _app(tmp_path, factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: "failed: train.device" in app.status_bar.plain)
        assert "failed: train.device: cuda requested" in app.status_bar.plain
        await pilot.press("space")  # no run: a notice, no crash
        assert app.is_running


@aio
async def test_cpu_budget_defers_chart_redraws_while_training(tmp_path: Path, scripted, monkeypatch) -> None:
    """Over its share of a core, the UI stops redrawing charts until the budget recovers; keys
    the user presses still draw at once, and a run that ends draws its final state.

    The UI thread's CPU clock is faked (every reading one CPU second later), so the budget is
    spent whatever the machine's speed, and the test calls redraw() itself instead of waiting
    on the timer."""
    import itertools

    from engine.events import EvalLogged

    app = _app(tmp_path, scripted(hold=True), redraw_hz=0.01)  # the timer never fires during the test
    clock = itertools.count()
    app.budget.cpu_clock = lambda: float(next(clock))
    app.budget.max_stale_s = 1e9  # no redraw forced by staleness either
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        acc = app.query_one("#acc", Chart)
        app.data.apply(EvalLogged(10000, {"step": 10000, "train_acc": 1.0, "val_acc": 1.0}))  # new rows
        deferred = app.deferred
        app.redraw()
        assert app.data.live and app.deferred == deferred + 1
        assert acc.stale(app.chart_stamp)  # the latest rows are not on screen yet
        drawn = acc.draws
        await pilot.press("l")  # a key is drawn at once, budget or not
        await wait_for(pilot, lambda: acc.draws > drawn and not acc.stale(app.chart_stamp))
        await pilot.press("s")
        await wait_for(pilot, lambda: app.data.status == "finished")
        app.redraw()  # nothing trains: the budget no longer applies
        assert not acc.stale(app.chart_stamp)  # the finished run's last state is drawn


def test_a_failing_test_does_not_leave_the_scripted_run_holding(tmp_path: Path, scripted) -> None:
    """An exception inside run_test() ends the app; the app's unmount stops the engine, so the
    worker thread ends and asyncio.run (pytest) does not wait on it forever."""
    import asyncio

    import pytest

    factory = scripted(hold=True)

    async def body() -> None:
        app = _app(tmp_path, factory)
        async with app.run_test() as pilot:
            await wait_for(pilot, lambda: app.data.step == 10000)
            raise RuntimeError("a failing assertion")

    with pytest.raises(RuntimeError, match="a failing assertion"):
        asyncio.run(body())  # returns only once the worker thread has ended
    assert factory.runs[0].closed
    assert _summary(factory.runs[0])["status"] == "interrupted"


@aio
async def test_ctrl_c_closes_the_run_as_q_does(tmp_path: Path, scripted) -> None:
    factory = scripted(hold=True)
    app = _app(tmp_path, factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running)
    assert factory.runs[0].closed and _summary(factory.runs[0])["status"] == "interrupted"
