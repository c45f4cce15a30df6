"""The compare view: one logged column of several runs overlaid (Adam vs Adam-LR, random vs skewed).

A sweep group directory draws one curve per arm × grid cell: the mean over its seeds, with the
min–max band across seeds behind it (engine/records/group.py: `grok plot` and `grok figure` draw the
same). Every run keeps one colour and number (its place in the list) while others are toggled; the
legend is a numbered key list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList
from textual.widgets.option_list import Option

from engine.config import ConfigError
from engine.records.run import run_stamp
from engine.rundir import clean_text, is_group, is_run_dir, short_name
from grok_tui.charts import views
from grok_tui.charts.canvas import Line, Plot, run_name
from grok_tui.charts.series import Point, Trace
from grok_tui.groupdata import CellCurve, GroupData, load_group, stamp
from grok_tui.rundata import RunData, load_run
from grok_tui.widgets.line_chart import LineChart

LIVE = "(live run)"
BAND_GLYPH = "·"  # the min–max band under NO_COLOR; the mean draws over it with the cell's glyph


def run_dirs(root: Path) -> list[Path]:
    """Run directories and sweep group directories under `root`, newest first."""
    if not root.is_dir():
        return []
    found = (d for d in root.iterdir() if is_run_dir(d) or is_group(d))
    return sorted(found, key=lambda d: d.name, reverse=True)


def _cell_points(cell: CellCurve, x_max: float, log_x: bool) -> tuple[list[Point], list[Point]]:
    """Mean and band bucketed on the plot's axis, as a run's Trace is: each band bucket keeps the
    min of the lows and the max of the highs that fell in it, and the mean as its last value."""
    mean, band = Trace(x_max), Trace(x_max)
    for step, m, lo, hi in zip(cell.steps, cell.mean, cell.min, cell.max, strict=True):
        mean.add(float(step), float(m))
        for y in (lo, hi, m):
            band.add(float(step), float(y))
    return mean.points(log_x), band.points(log_x)


def compare_plot(
    runs: list[tuple[int, RunData]], groups: list[tuple[int, GroupData]], axis: views.Axis, column: str = "val_acc"
) -> Plot:
    """views.compare for runs, plus one mean curve and min–max band per sweep cell (val_acc) on the same axis."""
    plot = views.compare(runs, axis, column, max([1.0, *(c.max_steps for _, g in groups for c in g.cells)]))
    # a parent and its forks share the steps before the fork (a fork's log starts with its parent's rows),
    # so they lie on one step axis and part at the fork: F marks it, I an intervention (docs/FORK.md)
    plot.markers = [*plot.markers, *sorted({(float(s), m) for _, d in runs for s, m in d.fork_marks})]
    if not groups:
        return plot
    colors, glyphs = views.COLORS, views.GLYPHS
    bands: list[Line] = []
    means: list[Line] = []
    for k, g in groups:
        for j, cell in enumerate(g.cells):
            i = k + j
            color = colors[i % len(colors)]
            mean, band = _cell_points(cell, plot.x_max, axis.log)
            label = f"{g.path.name}: {cell.label}" if len(groups) > 1 else cell.label
            bands.append(Line("", band, f"dim {color}", BAND_GLYPH))  # drawn first, under every curve
            means.append(Line(f"{k + 1}.{j + 1}", mean, color, glyphs[i % len(glyphs)]))
            plot.legend.append(f"{k + 1}.{j + 1} {clean_text(label)} ({cell.n} seeds)")
    plot.title += " (sweeps: mean over seeds, band min–max)"
    plot.lines = [*bands, *plot.lines, *means]
    return plot


class CompareScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "back"),
        Binding("space,enter", "toggle_run", "select", key_display="␣"),
        Binding("y", "next_column", "column", tooltip="overlay the next logged column"),
    ]
    DEFAULT_CSS = """
    CompareScreen #runs { width: 36%; min-width: 24; max-width: 48; height: 1fr; }
    CompareScreen #compare-body { height: 1fr; }
    CompareScreen #compare-title { height: 1; }
    """

    def __init__(self, root: Path, chosen: list[str]) -> None:
        super().__init__()
        self.root = root
        self.chosen = [str(Path(c)) for c in chosen]
        self.values: list[str] = []  # option values in list order: a run's number and colour
        self.selected: list[str] = []
        self.column = "val_acc"
        self.loaded: dict[str, tuple[float, RunData]] = {}  # dir -> (metrics.csv mtime, data)
        self.groups: dict[str, tuple[tuple[Any, ...], GroupData]] = {}  # group dir -> (mtimes and column, data)
        self.version = 0

    def compose(self) -> ComposeResult:
        yield Label("compare: ␣ select, y column, , . cursor, z zoom, l log x, esc back", id="compare-title")
        with Horizontal(id="compare-body"):
            yield OptionList(id="runs")
            yield LineChart(
                lambda: compare_plot(self.selected_runs(), self.selected_groups(), self.app.axis, self.column),  # type: ignore[attr-defined]
                id="compare-chart",
            )
        yield Footer(compact=True)

    def on_mount(self) -> None:
        live = self.app.data  # type: ignore[attr-defined]
        if live.run_dir:
            self.values.append(LIVE)
        names = {str(d) for d in run_dirs(self.root)} | set(self.chosen)
        live_dir = str(Path(live.run_dir)) if live.run_dir else ""
        self.values += [d for d in sorted(names, reverse=True) if d != live_dir]
        self.selected = [v for v in self.values if v == LIVE or v in self.chosen]
        runs = self.query_one("#runs", OptionList)
        runs.add_options([Option(self._prompt(i, v), id=str(i)) for i, v in enumerate(self.values)])
        if self.values:
            runs.highlighted = 0  # the first key moves from here
        self.set_interval(1.0, self._reload)
        self._reload()
        runs.focus()

    def _prompt(self, i: int, value: str) -> Text:
        """`[x] 3 name` or `[ ] 3 name`: the state by glyph, readable under NO_COLOR (plain Text, so
        the brackets are not taken for markup)."""
        mark = "[x]" if value in self.selected else "[ ]"
        name = LIVE if value == LIVE else clean_text(short_name(Path(value).name))
        name += " (sweep)" if value != LIVE and is_group(value) else ""
        head = f"{mark} {i + 1} "
        # the list's width as its CSS gives it (36% of the screen, 24 to 48), less its border and scrollbar
        width = min(max(int(self.app.size.width * 0.36), 24), 48) - 4 - len(head)
        return Text(head + run_name(name, width))

    def action_toggle_run(self) -> None:
        runs = self.query_one("#runs", OptionList)
        i = runs.highlighted
        if i is None or i >= len(self.values):
            return
        v = self.values[i]
        self.selected = [s for s in self.selected if s != v] if v in self.selected else [*self.selected, v]
        runs.replace_option_prompt_at_index(i, self._prompt(i, v))
        self._reload()

    @on(OptionList.OptionSelected, "#runs")
    def _selected(self) -> None:
        self.action_toggle_run()

    def action_next_column(self) -> None:
        """Cycle through the columns the selected runs logged (the known ones first)."""
        have: list[str] = []
        for _, d in self.selected_runs():
            with d.lock:
                have += [c for c in d.raw if c not in have and d.raw[c].xs]
        have = have or list(views.COMPARE_COLUMNS)  # only sweeps selected: the columns every run logs
        cols = [c for c in views.COMPARE_COLUMNS if c in have] + [c for c in have if c not in views.COMPARE_COLUMNS]
        cols = [c for c in cols if c not in ("epoch", "wall_s")] or ["val_acc"]
        i = cols.index(self.column) if self.column in cols else -1
        self.column = cols[(i + 1) % len(cols)]
        self._reload()

    def figure_sources(self) -> list[str]:
        """The selected runs and groups as directories, in the list's order (the live run by its own)."""
        live = self.app.data.run_dir  # type: ignore[attr-defined]
        out = [str(live) if v == LIVE else v for v in self.values if v in self.selected]
        return [v for v in out if v]

    def x_max(self) -> float:
        x_max: float = self.query_one(LineChart).source().x_max
        return x_max

    def selected_runs(self) -> list[tuple[int, RunData]]:
        runs = {LIVE: self.app.data, **{d: data for d, (_, data) in self.loaded.items()}}  # type: ignore[attr-defined]
        return [(i, runs[v]) for i, v in enumerate(self.values) if v in self.selected and v in runs]

    def selected_groups(self) -> list[tuple[int, GroupData]]:
        return [(i, self.groups[v][1]) for i, v in enumerate(self.values) if v in self.selected and v in self.groups]

    def _reload(self) -> None:
        """Re-read selected runs and sweeps whose metrics changed (still going in another process)."""
        for value in self.selected:
            if value == LIVE:
                continue
            try:
                if is_group(value):
                    mtimes = (*stamp(value), self.column)
                    if value not in self.groups or self.groups[value][0] != mtimes:
                        self.groups[value] = (mtimes, load_group(value, self.column))
                        self.version += 1
                    continue
                mtime = run_stamp(value)
                if value not in self.loaded or self.loaded[value][0] != mtime:
                    self.loaded[value] = (mtime, load_run(value))
                    self.version += 1
            except (ConfigError, OSError) as e:  # a run directory this version cannot read: say so, keep going
                self.notify(clean_text(e), severity="error", markup=False)
                self.selected.remove(value)
                i = self.values.index(value)
                self.query_one("#runs", OptionList).replace_option_prompt_at_index(i, self._prompt(i, value))
        self.redraw()

    def redraw(self) -> None:
        app: Any = self.app
        stamp_ = (self.version, app.data.plot_version, app.axis, tuple(self.selected), self.column)
        self.query_one(LineChart).poll(stamp_)

    def action_close(self) -> None:
        self.app.pop_screen()
