"""SVG snapshots of the main screen at 80x24 and 160x48 (and 80x24 under NO_COLOR)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grok_tui.app import create_app
from tests.tui.conftest import ScriptedRun, painted, wait_for


def _app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)  # the status bar shows the run directory: keep it the same every time

    def factory(cfg, out):
        return ScriptedRun(cfg, out, dirname="demo-skewed_mul")

    return create_app("skewed_mul", out="runs", steps=10000, run_factory=factory)


async def _finished(pilot) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.data.status == "finished")
    await wait_for(pilot, lambda: painted(app))  # every chart of the view shows the finished run


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_main_screen(snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size) -> None:
    assert snap_compare(_app(tmp_path, monkeypatch), terminal_size=size, run_before=_finished)


def test_main_screen_no_color(snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert snap_compare(_app(tmp_path, monkeypatch), terminal_size=(80, 24), run_before=_finished)


def test_tokens_view(snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert snap_compare(_app(tmp_path, monkeypatch), terminal_size=(80, 24), press=["t"], run_before=_finished)
