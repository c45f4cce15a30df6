"""Line plots: braille pixels in colour, one glyph per series under NO_COLOR.

Drawing cost depends only on the chart's size and the capped number of points per series
(`grok_tui.charts.series.BUCKETS`), never on the length of the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rich.text import Text

from grok_tui.charts.lines import Lines
from grok_tui.charts.series import Point, axis_frac

BRAILLE = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # [row][col] dot bits of U+2800
LABEL_W = 7  # y tick labels


@dataclass
class Line:
    label: str
    points: list[Point]
    color: str
    glyph: str  # the series' marker under NO_COLOR


@dataclass
class Plot:
    title: str
    lines: list[Line]
    x_max: float
    x_log: bool
    y_log: bool = False
    y_range: tuple[float, float] | None = None
    note: str = ""  # e.g. "probe off: ..." shown in place of an empty chart
    markers: list[tuple[float, str]] = field(default_factory=list)  # (step, letter), e.g. memorized


def fmt_num(v: float) -> str:
    """A short tick label: 0.5, 12, 3.4k, 1e-05."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else "-"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        return f"{v:.0e}"
    if a >= 1000:
        return f"{v / 1000:.3g}k"
    return f"{v:.3g}"


def _x_ticks(x_max: float, x_log: bool) -> list[float]:
    if x_log:
        return [10.0**k for k in range(0, int(math.log10(max(x_max, 10))) + 1)]
    raw = x_max / 4
    mag = 10 ** math.floor(math.log10(max(raw, 1e-9)))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [step * i for i in range(0, int(x_max / step) + 1)]


def _y_bounds(plot: Plot) -> tuple[float, float] | None:
    vals: list[float] = []
    for line in plot.lines:
        for p in line.points:
            vals.extend((p.lo, p.hi))
    if plot.y_log:
        vals = [math.log10(v) for v in vals if v > 0]
    if plot.y_range is not None:
        lo, hi = plot.y_range
        return (math.log10(lo), math.log10(hi)) if plot.y_log else (lo, hi)
    if not vals:
        return None
    lo, hi = min(vals), max(vals)
    if hi - lo < 1e-12:
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    return lo, hi


def render_plot(plot: Plot, width: int, height: int, mono: bool) -> Lines:
    out = Lines()
    head = Text(plot.title, style="bold")
    for line in plot.lines:
        if line.points and line.label:  # an unlabelled line (a band) stays out of the legend
            head.append("  ")
            head.append(f"{line.glyph} " if mono else "━ ", style="" if mono else line.color)
            head.append(line.label)
    head.truncate(width, overflow="ellipsis")
    out.append_text(head)
    out.append("\n")
    ph, pw = height - 2, width - LABEL_W - 1
    if ph < 2 or pw < 8:
        return out
    bounds = _y_bounds(plot)
    if bounds is None or not any(line.points for line in plot.lines):
        note = plot.note or "waiting for data…"
        for r in range(ph):
            out.append(" " * (LABEL_W + 1))
            out.append(note.center(pw) if r == ph // 2 else "", style="italic")
            out.append("\n")
        return out
    y0, y1 = bounds
    xres, yres = (1, 1) if mono else (2, 4)
    W, H = pw * xres, ph * yres

    def py(v: float) -> int:
        if plot.y_log:
            v = math.log10(v) if v > 0 else y0
        f = (v - y0) / (y1 - y0)
        return H - 1 - min(max(int(round(f * (H - 1))), 0), H - 1)

    chars: dict[tuple[int, int], str] = {}
    styles: dict[tuple[int, int], str] = {}
    bits: dict[tuple[int, int], int] = {}
    for line in plot.lines:
        pixels: set[tuple[int, int]] = set()
        prev: tuple[int, int] | None = None
        for p in line.points:
            x = int(round(p.fx * (W - 1)))
            a, b = py(p.lo), py(p.hi)
            for y in range(min(a, b), max(a, b) + 1):
                pixels.add((x, y))
            cur = (x, py(p.last))
            if prev is not None and cur[0] - prev[0] > 1:
                n = cur[0] - prev[0]
                for i in range(1, n):
                    pixels.add((prev[0] + i, int(round(prev[1] + (cur[1] - prev[1]) * i / n))))
            prev = cur
        for x, y in pixels:
            cell = (x // xres, y // yres)
            if mono:
                chars[cell] = line.glyph
            else:
                bits[cell] = bits.get(cell, 0) | BRAILLE[y % 4][x % 2]
            styles[cell] = line.color
    if not mono:
        chars = {cell: chr(0x2800 + b) for cell, b in bits.items()}
    for step, letter in plot.markers:
        cx = int(round(axis_frac(step, plot.x_max, plot.x_log) * (pw - 1)))
        for r in range(ph):
            if (cx, r) not in chars:
                chars[(cx, r)], styles[(cx, r)] = ("┊" if r else letter), "dim"
    labels = {0: y1, ph - 1: y0, (ph - 1) // 2: (y0 + y1) / 2}
    for r in range(ph):
        if r in labels:
            v = 10 ** labels[r] if plot.y_log else labels[r]
            out.append(f"{fmt_num(v):>{LABEL_W}}┤", style="dim")
        else:
            out.append(" " * LABEL_W + "│", style="dim")
        run_style, run = "", []
        for c in range(pw):
            ch = chars.get((c, r), " ")
            st = styles.get((c, r), "") if ch != " " else ""
            if st != run_style and run:
                out.append("".join(run), style=run_style)
                run = []
            run_style = st
            run.append(ch)
        out.append("".join(run), style=run_style)
        out.append("\n")
    axis = [" "] * pw
    for tick in _x_ticks(plot.x_max, plot.x_log):
        label = fmt_num(tick)
        c = int(round(axis_frac(tick, plot.x_max, plot.x_log) * (pw - 1)))
        c = min(c, pw - len(label))
        if all(ch == " " for ch in axis[max(c - 1, 0) : c + len(label) + 1]):
            axis[c : c + len(label)] = label
    out.append(" " * (LABEL_W - 4) + ("log " if plot.x_log else "lin ") + "└", style="dim")
    out.append("".join(axis), style="dim")
    return out
