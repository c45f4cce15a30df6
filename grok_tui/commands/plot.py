"""`grok plot RUN_DIR|GROUP_DIR...`: curves drawn with plotext as text on stdout, for SSH, pipes and CI logs.

A run draws each metric with its memorization (M) and generalization (G) steps marked; a sweep group
draws, per arm or grid cell, the mean over seeds with the min–max band as two dotted edges.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from grok_tui.axis import log_ticks, smooth
from grok_tui.axis import tick_label as _tick
from grok_tui.errors import user_errors

COLORS = ("cyan", "magenta", "green", "orange", "blue", "red", "yellow", "gray")
# Without colour, each series by its own glyph.
TINTS = {"M": "red", "F": "blue", "I": "blue"}  # a phase marker's colour; G and the rest green
MONO_MARKERS = ("*", "+", "o", "x", "#", "@", "%", "&", "=", "~", "$", "^", "v", ":", "!", "?")
BAND_MARKER = "·"
DEFAULT_METRICS = ("train_acc", "val_acc")


@dataclass
class Series:
    """One line of the chart: its label, its points and, for a group cell, the min–max edges."""

    label: str
    steps: list[float]
    values: list[float]
    lo: list[float] | None = None
    hi: list[float] | None = None


@dataclass
class Chart:
    title: str
    metrics: list[str]
    series: list[Series] = field(default_factory=list)
    markers: list[tuple[float, str]] = field(default_factory=list)  # (step, "M" or "G") phase markers


def run_chart(path: Path, metrics: list[str], many: bool) -> Chart:
    """A run's metrics; M and G markers from its summary, or from its rows while it is live or dead, and a
    fork's F and I (docs/FORK.md): `grok figure`'s curves (figures/data.py) without C and U."""
    from grok_tui.figures.data import run_curves

    name, curves, markers = run_curves(path, metrics)
    series = [Series(f"{name} {c.label}" if many else c.label, c.x, c.y) for c in curves]
    return Chart(name, metrics, series, [m for m in markers if m[1] not in ("C", "U")])


def group_chart(path: Path, metrics: list[str]) -> Chart:
    """Mean over seeds and min–max band per arm × grid cell (engine/records/group.py, as the compare view)."""
    from engine.config import ConfigError
    from engine.records.group import read_group
    from engine.rundir import clean_text, short_name

    group = read_group(path)  # a clear error for a broken group.json before anything is drawn
    what = metrics[0] if len(metrics) == 1 else ", ".join(metrics)
    chart = Chart(f"{short_name(clean_text(path.name))} {what}: mean over seeds, · min–max", metrics)
    for m in metrics:
        for cell in group.curves(m):  # engine/records/group.py: the compare view's and the figures' curves
            if not cell.n:
                continue
            label = clean_text(cell.label) + (f" {m}" if len(metrics) > 1 else "") + f" (n={cell.n})"
            chart.series.append(
                Series(label, cell.steps.tolist(), cell.mean.tolist(), cell.min.tolist(), cell.max.tolist())
            )
    if not chart.series:
        raise ConfigError(f"{path}: no member has logged {', '.join(metrics)} yet")
    return chart


def use_color() -> bool:
    """Colour only on a terminal that can show it: not piped, not TERM=dumb, no NO_COLOR."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


def render(chart: Chart, log_x: bool, k: int, width: int, height: int, color: bool) -> str:
    """The chart as text; ANSI colours only when `color`."""
    import plotext as plt

    markers = [(step, mark, TINTS.get(mark, "green")) for step, mark in chart.markers if not log_x or step > 0]
    keys = [_key(f"{MONO_MARKERS[i % len(MONO_MARKERS)] * 2} {s.label}", COLORS[i % len(COLORS)], color)
            for i, s in enumerate(chart.series)]  # fmt: skip
    keys += [_key(f"│ {mark} {step:,.0f}", tint, color) for step, mark, tint in markers]
    key_lines = _fold_keys(keys, width)  # above the plot, never inside it where a marker could cross it
    plt.clear_figure()
    plt.theme("clear")  # the terminal's own background, light or dark; only the series are coloured
    plt.limitsize(False, False)  # the size asked for, not the terminal's (piped, there is none)
    plt.plotsize(width, max(height - len(key_lines), 6))
    plt.title(chart.title)
    plt.xlabel("step (log)" if log_x else "step")
    xs_all: list[float] = []
    for i, s in enumerate(chart.series):
        pts = [(x, j) for j, x in enumerate(s.steps) if x > 0 or not log_x]  # step 0 has no place on a log axis
        if not pts:
            continue
        xs = [x for x, _ in pts]
        xs_all += xs
        c = COLORS[i % len(COLORS)]
        marker = "braille" if color else MONO_MARKERS[i % len(MONO_MARKERS)]
        for edge in (s.lo, s.hi):
            if edge is not None:
                plt.plot(xs, smooth([edge[j] for _, j in pts], k), color=c, marker=BAND_MARKER)
        plt.plot(xs, smooth([s.values[j] for _, j in pts], k), color=c, marker=marker)
    if not xs_all:
        return "(nothing to plot: no points" + (" past step 0 on a log axis)" if log_x else ")")
    if log_x:
        plt.xscale("log")
        ticks = log_ticks(min(xs_all), max(xs_all))
        plt.xticks(ticks, [_tick(t) for t in ticks])
    if all("acc" in m for m in chart.metrics):
        plt.ylim(0, 1)
        plt.yticks([0, 0.25, 0.5, 0.75, 1], ["0", "0.25", "0.50", "0.75", "1.00"])
    for step, mark, tint in markers:
        plt.vline(step, tint)
        plt.text(mark, step, _top(chart), color=tint)
    text: str = plt.build()
    lines = (text if color else plt.uncolorize(text)).split("\n")
    return "\n".join([*lines[:1], *key_lines, *lines[1:]])


def _key(text: str, tint: str, color: bool) -> tuple[str, int]:
    """A key entry as printed and its width on screen."""
    import plotext as plt

    return (plt.colorize(text, tint) if color else text), len(text)


def _fold_keys(keys: list[tuple[str, int]], width: int) -> list[str]:
    """The key entries two spaces apart, folded to `width`."""
    lines: list[str] = []
    line, used = "", 0
    for text, n in keys:
        if used and used + 2 + n > width:
            lines.append(line)
            line, used = "", 0
        line, used = (f"{line}  {text}", used + 2 + n) if used else (text, n)
    return [*lines, line] if used else lines


def _top(chart: Chart) -> float:
    vals = [v for s in chart.series for v in (s.hi or s.values) if math.isfinite(v)]
    return max(vals) if vals else 1.0


def charts(paths: list[str], metrics: list[str]) -> list[Chart]:
    """The runs given share one chart; a group gets one chart per metric."""
    from engine.config import ConfigError
    from engine.rundir import is_group, is_run_dir

    runs = [Path(p) for p in paths if is_run_dir(p)]
    out: list[Chart] = []
    for p in map(Path, paths):
        if is_group(p):
            out.extend(group_chart(p, [m]) for m in metrics)  # one chart per metric: a legend per cell
        elif not is_run_dir(p):
            raise ConfigError(f"{p}: not a run directory (no config.json) nor a sweep group (no group.json)")
    if runs:
        run_charts = [run_chart(r, metrics, many=len(runs) > 1) for r in runs]
        merged = run_charts[0]
        if len(run_charts) > 1:
            # every run's markers, once each: a parent and its fork share M before F, and F is the fork's
            marks = list(dict.fromkeys(m for c in run_charts for m in c.markers))
            merged = Chart(f"{len(run_charts)} runs", metrics, [s for c in run_charts for s in c.series], marks)
        out.insert(0, merged)
    return out


def plot_text(
    paths: list[str],
    metrics: list[str],
    log_x: bool = True,
    k: int = 1,
    width: int = 0,
    height: int = 0,
    color: bool | None = None,
) -> str:
    """Every chart for `paths`, as the text `grok plot` prints (also used by `grok report --plot`)."""
    cols, rows = shutil.get_terminal_size((80, 30))  # a pipe: 80 columns, as every command's output
    w = width or min(max(cols, 40), 160)
    h = height or max(min(rows - 4, 30), 15)
    colored = use_color() if color is None else color
    return "\n\n".join(render(c, log_x, k, w, h, colored) for c in charts(paths, metrics))


app = typer.Typer()  # `grok plot`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def plot(
    paths: Annotated[list[str], typer.Argument(help="Run directories and/or sweep group directories.")],
    metrics: Annotated[str, typer.Option("--metrics", "-m", help="Comma-separated metric columns.")] = ",".join(
        DEFAULT_METRICS
    ),
    log_x: Annotated[bool, typer.Option("--log-x/--linear-x", help="Log or linear step axis.")] = True,
    k: Annotated[int, typer.Option("--smooth", help="Trailing mean over K evaluations (1 = none).")] = 1,
    width: Annotated[int, typer.Option("--width", help="Columns (default: the terminal's, or 80).")] = 0,
    height: Annotated[int, typer.Option("--height", help="Rows (default: the terminal's, or 26).")] = 0,
    color: Annotated[
        bool | None, typer.Option("--color/--no-color", help="ANSI colours (default: only on a terminal).")
    ] = None,
) -> None:
    """Draw runs' curves (M/G phase markers) or a sweep's mean and min–max band per arm, as text on stdout."""
    from engine.config import ConfigError
    from grok_tui.options import parse_metrics

    cols = parse_metrics(metrics, k)
    if (width and width < 30) or (height and height < 8):
        raise ConfigError("--width must be >= 30 and --height >= 8")
    colored = use_color() if color is None else color
    typer.echo(plot_text(paths, cols, log_x, k, width, height, colored), color=colored)
