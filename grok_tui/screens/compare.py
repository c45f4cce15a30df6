"""The compare view: validation accuracy of several runs overlaid (Adam vs Adam-LR, random vs skewed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Label, SelectionList

from grok_tui import views
from grok_tui.rundata import RunData, load_run
from grok_tui.widgets.line_chart import LineChart

LIVE = "(live run)"


def run_dirs(root: Path) -> list[Path]:
    """Run directories under `root`, newest first."""
    if not root.is_dir():
        return []
    return sorted((d for d in root.iterdir() if (d / "config.json").is_file()), key=lambda d: d.name, reverse=True)


class CompareScreen(Screen[None]):
    BINDINGS = [Binding("escape", "close", "back")]
    DEFAULT_CSS = """
    CompareScreen #runs { width: 38; height: 1fr; }
    CompareScreen #compare-body { height: 1fr; }
    CompareScreen #compare-title { height: 1; }
    """

    def __init__(self, root: Path, chosen: list[str]) -> None:
        super().__init__()
        self.root = root
        self.chosen = [str(Path(c)) for c in chosen]
        self.loaded: dict[str, tuple[float, RunData]] = {}  # dir -> (metrics.csv mtime, data)
        self.version = 0

    def compose(self) -> ComposeResult:
        yield Label("compare: space toggles a run, l log x, esc back", id="compare-title")
        with Horizontal(id="compare-body"):
            yield SelectionList[str](id="runs")
            yield LineChart(lambda: views.compare(self.selected_runs(), self.app.log_x), id="compare-chart")  # type: ignore[attr-defined]
        yield Footer(compact=True)

    def on_mount(self) -> None:
        runs = self.query_one("#runs", SelectionList)
        live = self.app.data  # type: ignore[attr-defined]
        if live.run_dir:
            runs.add_option((LIVE, LIVE, True))
        names = {str(d) for d in run_dirs(self.root)} | set(self.chosen)
        live_dir = str(Path(live.run_dir)) if live.run_dir else ""
        for d in sorted(names, reverse=True):
            if d != live_dir:
                runs.add_option((Path(d).name, d, d in self.chosen))
        self.set_interval(1.0, self._reload)
        self._reload()
        runs.focus()

    def selected_runs(self) -> list[RunData]:
        out = []
        for value in self.query_one("#runs", SelectionList).selected:
            if value == LIVE:
                out.append(self.app.data)  # type: ignore[attr-defined]
            elif value in self.loaded:
                out.append(self.loaded[value][1])
        return out

    def _reload(self) -> None:
        """Re-read selected runs whose metrics.csv changed (runs still going in another process)."""
        for value in self.query_one("#runs", SelectionList).selected:
            if value == LIVE:
                continue
            path = Path(value) / "metrics.csv"
            mtime = path.stat().st_mtime if path.exists() else 0.0
            if value not in self.loaded or self.loaded[value][0] != mtime:
                try:
                    self.loaded[value] = (mtime, load_run(value))
                except ValueError as e:
                    self.notify(str(e), severity="error")
                    continue
                self.version += 1
        app: Any = self.app
        chosen = tuple(self.query_one("#runs", SelectionList).selected)
        stamp = (self.version, app.data.plot_version, app.log_x, chosen)
        self.query_one(LineChart).poll(stamp)

    @on(SelectionList.SelectedChanged)
    def _changed(self) -> None:
        self._reload()

    def action_close(self) -> None:
        self.app.pop_screen()
