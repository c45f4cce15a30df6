"""Line plots: braille pixels in colour, one glyph per series under NO_COLOR.

Drawing cost depends only on the chart's size and the capped number of points per series
(`grok_tui.charts.series.BUCKETS`), never on the length of the run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
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
    x_lo: float = 0.0  # the axis starts here (zoomed in), in steps
    cursor: float | None = None  # the cursor's step: a vertical line, and the legend reads values there
    legend: list[str] = field(default_factory=list)  # key entries below the title (compare: "1 run-name")


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


def fmt_step(v: float) -> str:
    """A step for the axis' end tick and the readouts: 10000 -> 10k, 1234 -> 1,234."""
    v = round(v)
    if v >= 10_000 and v % 1000 == 0:
        return f"{v // 1000}k"
    return f"{v:,}"


# a run directory name's end that says which run it is: its seed, any forks and unique_dir's -N
RUN_TAIL = re.compile(r"-s\d+(-fork\d+)*(-\d+)?( \(sweep\))?$")


def run_name(name: str, width: int) -> str:
    """A run's name in `width` columns, cut from the middle with …: its seed and `-forkN` (the end) stay whole,
    then as much of its start (the preset) as fits."""
    if len(name) <= width:
        return name
    if width < 4:
        return name[:width]
    m = RUN_TAIL.search(name)
    tail = min(max(len(m.group(0)) if m else 0, (width - 1) // 2), width - 2)
    return name[: width - 1 - tail] + "…" + name[-tail:]


def wrap_note(note: str, width: int) -> list[str]:
    """A note split at spaces (and after ':') to lines of at most `width`, so a hint fits its chart."""
    words = note.replace(": ", ":\n").split("\n")
    out: list[str] = []
    for part in words:
        line = ""
        for w in part.split(" "):
            if line and len(line) + 1 + len(w) > width:
                out.append(line)
                line = w
            else:
                line = f"{line} {w}" if line else w
        out.append(line)
    return [ln[:width] for ln in out]


def note_block(out: Lines, note: str, pw: int, ph: int, indent: int = LABEL_W + 1) -> Lines:
    """An empty chart: `ph` rows holding the note (or "waiting for data…") wrapped to `pw` and centred."""
    lines = wrap_note(note or "waiting for data…", pw)[:ph]
    top = max((ph - len(lines)) // 2, 0)
    for r in range(ph):
        out.append(" " * indent)
        out.append(lines[r - top].center(pw) if 0 <= r - top < len(lines) else "", style="italic")
        out.append("\n")
    return out


def pack_keys(entries: list[str], width: int, rows: int) -> list[str]:
    """Key entries packed into at most `rows` lines of `width`; entries cut to fit, never dropped
    silently (the last line says how many more there are)."""
    if not entries:
        return []
    col = min(max(len(e) for e in entries) + 2, width)
    per = max(width // col, 1)
    lines = [
        "".join(e[: col - 2].ljust(col) for e in entries[i : i + per]).rstrip() for i in range(0, len(entries), per)
    ]
    if len(lines) > rows:
        shown = (rows - 1) * per
        lines = [*lines[: rows - 1], f"… and {len(entries) - shown} more (see the list)"]
    return [ln[:width] for ln in lines]


def _x_ticks(x_lo: float, x_max: float, x_log: bool) -> list[float]:
    if x_log:
        ticks = [x_lo] + [10.0**k for k in range(1, int(math.log10(max(x_max, 10))) + 1)]
        return [t for t in ticks if x_lo <= t <= x_max]
    raw = (x_max - x_lo) / 4
    mag = 10 ** math.floor(math.log10(max(raw, 1e-9)))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(x_lo / step) * step
    return [x_lo] + [first + step * i for i in range(0, int((x_max - first) / step) + 1)]


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


def _head(plot: Plot, width: int, mono: bool) -> Text:
    """The title and the key of every labelled series; where that is too wide, the key keeps every
    series by dropping the title, then the spaces, then cutting each label to its first word."""
    keyed = [ln for ln in plot.lines if ln.points and ln.label]  # a band or a raw curve under its EMA: no key
    cursor = plot.cursor is not None
    title = f"@ step {fmt_step(plot.cursor or 0)}" if cursor else plot.title
    head = Text()
    for with_title, gap, short in ((True, "  ", False), (False, "  ", False), (False, " ", False), (False, " ", True)):
        head = Text(title if with_title or cursor else "", style="bold reverse" if cursor else "bold")
        for line in keyed:
            if head.plain:
                head.append(gap)
            head.append(f"{line.glyph} " if mono else "━ ", style="" if mono else line.color)
            label = line.label
            if short and " " in label and cursor:  # a readout: `val 0.31` keeps its value
                name, _, value = label.rpartition(" ")
                label = f"{name.split()[-1]} {value}"
            elif short:
                label = label.split()[-1]
            head.append(label)
        if head.cell_len <= width:
            return head
    head.truncate(width, overflow="ellipsis")
    return head


def _marker_row(plot: Plot, pw: int) -> list[tuple[str, str]]:
    """The row above the plot area: the phase letters (M, C, U, G) with their steps, and the cursor's ▼;
    never covered by a curve.

    Letters never overlap: one that would land on another moves to the next free column, keeping their
    order along the axis (C, U and G can sit within a few columns of each other on the log axis). Each
    step is written beside its letter where it fits without touching another; the status bar carries
    them all.
    """
    row = [" "] * pw
    style = [""] * pw
    cur = None
    if plot.cursor is not None:
        cur = round(axis_frac(plot.cursor, plot.x_max, plot.x_log, plot.x_lo) * (pw - 1))
        cur = min(max(cur, 0), pw - 1)
    marks = sorted((s, m) for s, m in plot.markers if plot.x_lo <= s <= plot.x_max)[: max(pw // 2, 1)]
    cols = [round(axis_frac(s, plot.x_max, plot.x_log, plot.x_lo) * (pw - 1)) for s, _ in marks]
    # forward: each letter at or right of its place, a blank column after the previous letter and off the
    # cursor; backward: the same leftwards from the row's end; what still collides is left out
    for i in range(len(cols)):
        cols[i] = max(cols[i], cols[i - 1] + 2 if i else 0)
        cols[i] += cols[i] == cur
    for i in range(len(cols) - 1, -1, -1):
        cols[i] = min(cols[i], cols[i + 1] - 2 if i + 1 < len(cols) else pw - 1)
        cols[i] -= cols[i] == cur
    keep = [i for i, c in enumerate(cols) if 0 <= c < pw and c != cur and (i == 0 or c > cols[i - 1])]
    marks, letters = [marks[i] for i in keep], [cols[i] for i in keep]
    for c, (_, letter) in zip(letters, marks, strict=True):
        row[c], style[c] = letter, "bold"
    if cur is not None:
        row[cur], style[cur] = "▼", "bold reverse"
    for c, (step, _) in zip(letters, marks, strict=True):
        label = fmt_step(step)
        # right of the letter, else left of it; a blank cell (or the row's end) on either side of the label
        for start in (c + 2, c - 1 - len(label)):
            lo, hi = start - 1, start + len(label)
            if start < 0 or hi > pw or any(row[k] != " " for k in range(max(lo, 0), min(hi + 1, pw)) if k != c):
                continue
            row[start : start + len(label)] = label
            style[start : start + len(label)] = ["bold"] * len(label)
            break
    return list(zip(row, style, strict=True))


def _append_runs(out: Lines, cells: list[tuple[str, str]]) -> None:
    run_style, run = "", list[str]()
    for ch, st in cells:
        st = st if ch != " " else ""
        if st != run_style and run:
            out.append("".join(run), style=run_style)
            run = []
        run_style = st
        run.append(ch)
    out.append("".join(run), style=run_style)


def _axis_row(plot: Plot, pw: int) -> str:
    """Ticks of the step axis, the end tick at the last column, and `step` in the middle."""
    axis = [" "] * pw
    end = fmt_step(plot.x_max)
    axis[pw - len(end) :] = end

    def put(c: int, label: str) -> bool:
        c = min(max(c, 0), pw - len(label))
        if all(ch == " " for ch in axis[max(c - 1, 0) : c + len(label) + 1]):
            axis[c : c + len(label)] = label
            return True
        return False

    for tick in _x_ticks(plot.x_lo, plot.x_max, plot.x_log):
        put(round(axis_frac(tick, plot.x_max, plot.x_log, plot.x_lo) * (pw - 1)), fmt_num(tick))
    # the axis label: in the middle if free, else in the widest gap between ticks
    if not put(pw // 2 - 2, "step"):
        text = "".join(axis)
        gaps = [(len(m.group()), m.start()) for m in re.finditer(r" {7,}", text)]
        if gaps:
            width, start = max(gaps)
            put(start + (width - 4) // 2, "step")
    return "".join(axis)


def render_plot(plot: Plot, width: int, height: int, mono: bool) -> Lines:
    out = Lines()
    out.append_text(_head(plot, width, mono))
    out.append("\n")
    keys = pack_keys(plot.legend, width, max(height // 4, 1))
    for key in keys:  # the numbered key list of compare
        out.append(key + "\n", style="dim")
    with_markers = bool(plot.markers) or plot.cursor is not None
    ph, pw = height - 2 - len(keys) - with_markers, width - LABEL_W - 1
    if ph < 2 or pw < 8:
        return out
    bounds = _y_bounds(plot)
    if bounds is None or not any(line.points for line in plot.lines):
        return note_block(out, plot.note, pw, ph + with_markers)
    if with_markers:
        out.append(" " * (LABEL_W + 1))
        _append_runs(out, _marker_row(plot, pw))
        out.append("\n")
    y0, y1 = bounds
    xres, yres = (1, 1) if mono else (2, 4)
    W, H = pw * xres, ph * yres

    def py(v: float) -> int:
        if plot.y_log:
            v = math.log10(v) if v > 0 else y0
        f = (v - y0) / (y1 - y0)
        return H - 1 - min(max(round(f * (H - 1)), 0), H - 1)

    chars: dict[tuple[int, int], str] = {}
    styles: dict[tuple[int, int], str] = {}
    for line in plot.lines:
        _draw(chars, styles, line, _pixels(line, W, py), (xres, yres), mono)
    _draw_verticals(chars, styles, plot, pw, ph)
    labels = {0: y1, ph - 1: y0, (ph - 1) // 2: (y0 + y1) / 2}
    for r in range(ph):
        if r in labels:
            v = 10 ** labels[r] if plot.y_log else labels[r]
            out.append(f"{fmt_num(v):>{LABEL_W}}┤", style="dim")
        else:
            out.append(" " * LABEL_W + "│", style="dim")
        _append_runs(out, [(chars.get((c, r), " "), styles.get((c, r), "")) for c in range(pw)])
        out.append("\n")
    out.append(" " * (LABEL_W - 4) + ("log " if plot.x_log else "lin ") + "└", style="dim")
    out.append(_axis_row(plot, pw), style="dim")
    return out


def _pixels(line: Line, W: int, py: Callable[[float], int]) -> set[tuple[int, int]]:
    """The pixels of one line: each point's lo–hi span, joined to the previous point along its longer side."""
    pixels: set[tuple[int, int]] = set()
    prev: tuple[int, int] | None = None
    for p in line.points:
        x = round(p.fx * (W - 1))
        a, b = py(p.lo), py(p.hi)
        for y in range(min(a, b), max(a, b) + 1):
            pixels.add((x, y))
        cur = (x, py(p.last))
        if prev is not None:  # a steep jump stays a line
            dx, dy = cur[0] - prev[0], cur[1] - prev[1]
            n = max(abs(dx), abs(dy))
            for i in range(1, n):
                pixels.add((prev[0] + round(dx * i / n), prev[1] + round(dy * i / n)))
        prev = cur
    return pixels


def _draw(
    chars: dict[tuple[int, int], str],
    styles: dict[tuple[int, int], str],
    line: Line,
    pixels: set[tuple[int, int]],
    res: tuple[int, int],
    mono: bool,
) -> None:
    """Put a line's pixels into the character cells: its glyph (mono) or braille dots, in its colour."""
    xres, yres = res
    bits: dict[tuple[int, int], int] = {}
    for x, y in pixels:
        cell = (x // xres, y // yres)
        if mono:
            chars[cell] = line.glyph
        else:
            bits[cell] = bits.get(cell, 0) | BRAILLE[y % 4][x % 2]
        styles[cell] = line.color
    for cell, b in bits.items():  # a later line's cell keeps the earlier dots it shares
        prev_ch = chars.get(cell)
        old = ord(prev_ch) - 0x2800 if prev_ch and 0x2800 <= ord(prev_ch) < 0x2900 else 0
        chars[cell] = chr(0x2800 + (b | old))


def _draw_verticals(
    chars: dict[tuple[int, int], str], styles: dict[tuple[int, int], str], plot: Plot, pw: int, ph: int
) -> None:
    """The markers' dotted columns where no line is drawn, then the cursor's column over them."""
    for step, _ in plot.markers:
        if plot.x_lo <= step <= plot.x_max:
            cx = round(axis_frac(step, plot.x_max, plot.x_log, plot.x_lo) * (pw - 1))
            for r in range(ph):
                if (cx, r) not in chars:
                    chars[(cx, r)], styles[(cx, r)] = "┊", "dim"
    if plot.cursor is not None:
        cx = round(axis_frac(plot.cursor, plot.x_max, plot.x_log, plot.x_lo) * (pw - 1))
        for r in range(ph):
            if (cx, r) not in chars or chars[(cx, r)] == "┊":
                chars[(cx, r)], styles[(cx, r)] = "│", "bold"
