"""One real tiny run (p=7, a few hundred steps) driven to completion in the app."""

from __future__ import annotations

import json
from pathlib import Path

from grok_tui.app import create_app
from grok_tui.widgets.chart import Chart
from tests.tui.conftest import aio, painted, wait_for


@aio
async def test_real_tiny_run_to_completion(tmp_path: Path) -> None:
    sets = [
        "data.p=7",
        "model.d_embed=8",
        "train.batch_size=16",
        "train.eval_every=20",
        "train.device=cpu",
        "train.checkpoint_every=100",
    ]
    app = create_app("skewed_mul", sets=sets, steps=300, out=tmp_path / "runs")
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        await wait_for(pilot, lambda: "FINISHED" in app.status_bar.plain)
        assert app.data.step == 300 and app.data.max_steps == 300
        plot = app.query_one("#acc", Chart).source()
        assert [ln.label for ln in plot.lines] == ["train", "val", "val rare"]
        assert len(app.data.updates) == 9  # p + 2 tokens
        assert "FINISHED" in app.status_bar.plain
        await pilot.press("e")
        await pilot.pause()
    run_dir = Path(app.data.run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "finished" and summary["steps"] == 300
    assert app.last_export is not None and len(app.last_export.read_text().splitlines()) == 1 + 300 // 20 + 1


@aio
async def test_quit_during_a_real_run_logs_interrupted(tmp_path: Path) -> None:
    sets = ["data.p=7", "model.d_embed=8", "train.batch_size=16", "train.eval_every=50", "train.device=cpu"]
    app = create_app("skewed_mul", sets=sets, steps=1_000_000, out=tmp_path / "runs")
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.step >= 100)
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.worker is not None and app.worker.is_finished
    summary = json.loads((Path(app.data.run_dir) / "summary.json").read_text())
    assert summary["status"] == "interrupted" and 100 <= summary["steps"] < 1_000_000


@aio
async def test_flagship_preset_fills_every_panel_with_no_probe_off(tmp_path: Path) -> None:
    """skewed_mul's [probe] table turns every instrument on: at 160x48 the All view has data in all
    eight panels, and none of them says "probe off"."""
    sets = ["data.p=7", "model.d_embed=8", "train.batch_size=16", "train.eval_every=50", "train.device=cpu"]
    app = create_app("skewed_mul", sets=sets, steps=400, out=tmp_path / "runs")
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        assert app.tabs.active == "tab-all"
        await wait_for(pilot, lambda: painted(app))
        charts = list(app.query_one("#overview").query(Chart))
        assert len(charts) == 8
        for chart in charts:
            spec = chart.source()
            lines = getattr(spec, "lines", None)
            if lines is not None:
                assert lines and all(ln.points for ln in lines), chart.id
            else:
                assert spec.get("values") or spec.get("frames"), chart.id
            assert "probe off" not in chart.shown, chart.id


@aio
async def test_resume_continues_a_run_in_the_app(tmp_path: Path) -> None:
    from engine.config.presets import load_preset
    from engine.config.resolve import resolve
    from engine.events import EvalLogged
    from engine.train.run import Run

    sets = {"data.p": 7, "model.d_embed": 8, "train.batch_size": 16, "train.eval_every": 50, "train.device": "cpu"}
    cfg = resolve(load_preset("skewed_mul"), sets, steps=1000)
    run = Run(cfg, tmp_path / "runs")
    for ev in run.events():
        if isinstance(ev, EvalLogged) and ev.step >= 100:
            run.stop("interrupted")
    assert run.status == "interrupted"
    app = create_app(resume_dir=str(run.dir), steps=300)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished", timeout=120)
        assert app.data.run_dir == str(run.dir) and app.data.step == 300
    summary = json.loads((run.dir / "summary.json").read_text())
    assert summary["status"] == "finished" and summary["steps"] == 300
    steps = [int(line.split(",")[0]) for line in (run.dir / "metrics.csv").read_text().splitlines()[1:]]
    assert steps == list(range(0, 301, 50))  # continued where it stopped, nothing repeated
