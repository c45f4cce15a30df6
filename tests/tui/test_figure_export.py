"""`e` in the TUI writes a figure of the main view beside the CSV, when matplotlib is installed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grok_tui.app import create_app
from grok_tui.figures import view
from grok_tui.figures.draw import Panel
from tests.tui.conftest import aio, wait_for


@aio
async def test_e_writes_a_figure_beside_the_csv(tmp_path: Path, scripted) -> None:
    factory = scripted()
    app = create_app("skewed_mul", out=tmp_path / "runs", steps=10000, run_factory=factory)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        await pilot.press("e")
        await wait_for(pilot, lambda: app.last_figure is not None, timeout=60)
    run_dir = factory.runs[0].dir
    assert app.last_figure == run_dir.parent / f"{run_dir.name}.png"
    assert app.last_figure is not None
    assert app.last_figure.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert app.last_export == run_dir.parent / f"{run_dir.name}.csv"


@aio
async def test_e_says_when_it_skipped_the_figure(tmp_path: Path, scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without matplotlib the CSV is still written, and a notice says the figure was skipped, and why."""
    monkeypatch.setattr(view, "has_matplotlib", lambda: False)
    app = create_app("skewed_mul", out=tmp_path / "runs", steps=10000, run_factory=scripted())
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        await pilot.press("e")

        def said() -> list[str]:
            return [str(n.message) for n in app._notifications]

        await wait_for(pilot, lambda: any("figure skipped" in m for m in said()), timeout=60)
    assert any("matplotlib is not installed" in m for m in said())
    assert app.last_export is not None and app.last_figure is None


def test_view_figure_has_the_main_views_panels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.figures.test_figures import _run_dir

    d = _run_dir(tmp_path)
    drawn: list[Any] = []
    from grok_tui.figures import draw as draw_mod

    real = draw_mod.draw

    def spy(panels: list[Panel], **kw: Any) -> Any:
        fig = real(panels, **kw)
        drawn.append(fig)
        return fig

    monkeypatch.setattr(draw_mod, "draw", spy)
    assert view.export_view_figure(d, log_x=False) == tmp_path / f"{d.name}.png"
    (fig,) = drawn
    assert [ax.get_title() for ax in fig.axes] == [
        "tiny-s0: accuracy",
        "tiny-s0: loss",
    ]  # no val_loss column: train only
    assert [ln.get_label() for ln in fig.axes[1].get_lines() if not ln.get_label().startswith("_")] == ["train_loss"]
    acc, loss = (ax.get_lines()[0] for ax in fig.axes)
    assert acc.get_color() == loss.get_color()  # each panel its own legend: its first series the first colour
    assert fig.axes[0].get_xscale() == "linear"
    monkeypatch.setattr(view, "has_matplotlib", lambda: False)
    assert view.export_view_figure(d) is None


@aio
async def test_e_on_the_compare_view_writes_its_figure(tmp_path: Path) -> None:
    from grok_tui.screens.compare import CompareScreen
    from tests.engine.sweep.fakegroup import fake_group
    from tests.figures.test_figures import ARMS, STEPS, _curve, _run_dir

    runs = tmp_path / "runs"
    runs.mkdir()
    run = _run_dir(runs)
    g = fake_group(runs, ARMS, _curve, STEPS)
    app = create_app(out=runs, compare=[str(g.dir), str(run)])
    async with app.run_test(size=(140, 36)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        await pilot.press("e")  # no live run: no CSV, the compare view's figure only
        await wait_for(pilot, lambda: app.last_figure is not None, timeout=60)
    assert app.last_export is None
    assert app.last_figure is not None
    assert app.last_figure.parent == runs and app.last_figure.name.startswith("compare-")
    assert app.last_figure.name.endswith("-val_acc.png")
    assert app.last_figure.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_compare_figure_has_the_views_runs_and_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.config import ConfigError
    from grok_tui.figures import draw as draw_mod
    from tests.engine.sweep.fakegroup import fake_group
    from tests.figures.test_figures import ARMS, STEPS, _curve, _run_dir

    run = _run_dir(tmp_path)
    g = fake_group(tmp_path, ARMS, _curve, STEPS)
    drawn: list[Any] = []
    real = draw_mod.draw

    def spy(panels: list[Panel], **kw: Any) -> Any:
        drawn.append(real(panels, **kw))
        return drawn[-1]

    monkeypatch.setattr(draw_mod, "draw", spy)
    path = view.export_compare_figure([str(run), str(g.dir)], "val_acc", tmp_path / "out", log_x=False)
    assert path is not None and path.parent == tmp_path / "out"
    (fig,) = drawn
    assert len(fig.axes) == 2  # the runs' panel, then the group's
    assert fig.axes[0].get_xscale() == "linear"
    assert [ln.get_label() for ln in fig.axes[1].get_lines()] == ["adam (n=3)", "adamlr (n=3)"]
    with pytest.raises(ConfigError, match="select a run or a group first"):
        view.export_compare_figure([], "val_acc", tmp_path)
