"""The compare view: validation accuracy of several runs overlaid (Adam vs Adam-LR, random vs skewed).

A sweep group directory draws one curve per arm × grid cell: the mean val_acc over its seeds, with
the min–max band across seeds behind it (`grok_tui.groupdata`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Label, SelectionList

from grok_tui.charts import views
from grok_tui.charts.canvas import Line, Plot
from grok_tui.charts.series import Point, Trace
from grok_tui.groupdata import Cell, GroupData, is_group, load_group, stamp
from grok_tui.rundata import RunData, load_run
from grok_tui.widgets.line_chart import LineChart

LIVE = "(live run)"
BAND_GLYPH = "·"  # the min–max band under NO_COLOR; the mean draws over it with the cell's glyph


def run_dirs(root: Path) -> list[Path]:
    """Run directories and sweep group directories under `root`, newest first."""
    if not root.is_dir():
        return []
    found = (d for d in root.iterdir() if (d / "config.json").is_file() or is_group(d))
    return sorted(found, key=lambda d: d.name, reverse=True)


def _cell_points(cell: Cell, x_max: float, log_x: bool) -> tuple[list[Point], list[Point]]:
    """Mean and band bucketed on the plot's axis, as a run's Trace is: each band bucket keeps the
    min of the lows and the max of the highs that fell in it, and the mean as its last value."""
    mean, band = Trace(x_max), Trace(x_max)
    for step, m, lo, hi in zip(cell.steps, cell.mean, cell.lo, cell.hi, strict=True):
        mean.add(step, m)
        for y in (lo, hi, m):
            band.add(step, y)
    return mean.points(log_x), band.points(log_x)


def compare_plot(runs: list[RunData], groups: list[GroupData], log_x: bool) -> Plot:
    """views.compare for runs, plus one mean curve and min–max band per sweep cell on the same step axis."""
    plot = views.compare(runs, log_x, max([1.0, *(c.max_steps for g in groups for c in g.cells)]))
    if not groups:
        return plot
    colors, glyphs = views.COLORS, views.GLYPHS
    bands: list[Line] = []
    means: list[Line] = []
    cells = [(g, c) for g in groups for c in g.cells]
    for i, (g, cell) in enumerate(cells, start=len(runs)):
        color = colors[i % len(colors)]
        mean, band = _cell_points(cell, plot.x_max, log_x)
        label = f"{g.path.name}: {cell.label}" if len(groups) > 1 else cell.label
        bands.append(Line("", band, f"dim {color}", BAND_GLYPH))  # drawn first, under every curve
        means.append(Line(f"{label} ({cell.seeds} seeds)", mean, color, glyphs[i % len(glyphs)]))
    plot.title = "val accuracy (sweeps: mean over seeds, band min–max)"
    plot.lines = [*bands, *plot.lines, *means]
    plot.note = "no val_acc yet"
    return plot


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
        self.groups: dict[str, tuple[tuple[float, ...], GroupData]] = {}  # group dir -> (mtimes, data)
        self.version = 0

    def compose(self) -> ComposeResult:
        yield Label("compare: space toggles a run or sweep, l log x, esc back", id="compare-title")
        with Horizontal(id="compare-body"):
            yield SelectionList[str](id="runs")
            yield LineChart(
                lambda: compare_plot(self.selected_runs(), self.selected_groups(), self.app.log_x),  # type: ignore[attr-defined]
                id="compare-chart",
            )
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
                name = Path(d).name + (" (sweep)" if is_group(d) else "")
                runs.add_option((name, d, d in self.chosen))
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

    def selected_groups(self) -> list[GroupData]:
        return [self.groups[v][1] for v in self.query_one("#runs", SelectionList).selected if v in self.groups]

    def _reload(self) -> None:
        """Re-read selected runs and sweeps whose metrics changed (still going in another process)."""
        for value in self.query_one("#runs", SelectionList).selected:
            if value == LIVE:
                continue
            if is_group(value):
                mtimes = stamp(value)
                if value not in self.groups or self.groups[value][0] != mtimes:
                    try:
                        self.groups[value] = (mtimes, load_group(value))
                    except ValueError as e:  # ConfigError: an unreadable group.json
                        self.notify(str(e), severity="error")
                        continue
                    self.version += 1
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
        stamp_ = (self.version, app.data.plot_version, app.log_x, chosen)
        self.query_one(LineChart).poll(stamp_)

    @on(SelectionList.SelectedChanged)
    def _changed(self) -> None:
        self._reload()

    def action_close(self) -> None:
        self.app.pop_screen()
