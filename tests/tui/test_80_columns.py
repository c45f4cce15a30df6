"""The lab at 80×24: the footer's keys all fit, and the compare view's run list leaves the chart room."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Footer, Label, OptionList

from grok_tui.app import create_app
from grok_tui.screens.compare import CompareScreen
from tests.tui.conftest import aio, painted, wait_for


def _keys_fit(screen: object, width: int) -> list[str]:
    """The footer's keys, each checked to end within `width` columns (none cut mid-word)."""
    from textual.widgets._footer import FooterKey  # the footer's key widgets: no public name for them

    footer = screen.query_one(Footer)  # type: ignore[attr-defined]
    keys = list(footer.query(FooterKey))
    assert keys and all(k.region.right <= width for k in keys), str([(k.key, k.region.right) for k in keys])
    return [k.key for k in keys]


@aio
async def test_footer_and_compare_fit_80_columns(tmp_path: Path, scripted) -> None:
    app = create_app("skewed_mul", out=tmp_path / "runs", steps=2000, run_factory=scripted())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        await wait_for(pilot, lambda: painted(app))
        shown = _keys_fit(app.screen, 80)
        assert {"question_mark", "q", "space", "comma", "z", "s", "c"} <= set(shown)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        await pilot.pause()
        screen = app.screen
        runs = screen.query_one("#runs", OptionList)
        assert runs.region.width <= 32  # 36% of 80: the chart keeps most of the screen
        title = screen.query_one("#compare-title", Label)
        assert len(str(title.render())) <= 80
        _keys_fit(screen, 80)
