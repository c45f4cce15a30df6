"""Bar charts and heat maps drawn with block characters (readable under NO_COLOR)."""

from __future__ import annotations

import math

from rich.text import Text

from grok_tui.charts.canvas import LABEL_W, fmt_num, fmt_step, note_block
from grok_tui.charts.lines import Lines

EIGHTHS = " ▁▂▃▄▅▆▇█"
SHADES = " ░▒▓█"
HEAT = ("#20124d", "#3b4cc0", "#2c7fb8", "#41b6c4", "#a1dab4", "#ffffb2", "#fecc5c", "#f03b20")


def _title(out: Lines, title: str, legend: str, width: int) -> None:
    head = Text(title, style="bold")
    if legend:
        head.append("  " + legend, style="dim")
    head.truncate(width, overflow="ellipsis")
    out.append_text(head)
    out.append("\n")


RARE_GLYPH = "▲"  # under a rare token's bar, with or without colour
ACC_COLORS = ("#d7301f", "#fc8d59", "#fee08b", "#91cf60", "#1a9850")  # per-token val acc, 0 -> 1


def _groups(n: int, cols: int) -> list[range]:
    """Split n items over at most `cols` columns; each column gets a contiguous range."""
    k = min(n, cols)
    return [range(i * n // k, (i + 1) * n // k) for i in range(k)]


def render_bars(
    title: str,
    values: list[float],
    width: int,
    height: int,
    mono: bool,
    rare: list[bool] | None = None,
    note: str = "",
    legend: str = "",
    ticks: dict[int, str] | None = None,
    color: str = "cyan",
    y_lo: float | None = None,
    y_fmt: str = "{}",
    strip: list[float] | None = None,
    strip_label: str = "",
) -> Lines:
    """Vertical bars from `y_lo` (0 by default) up; `rare` bars in a warning colour (hatched under
    NO_COLOR) with a ▲ row beneath them; `strip`, values in [0, 1] shaded one row per bar group
    (per-token val accuracy beside the update counts)."""
    out = Lines()
    _title(out, title, legend, width)
    marks = bool(rare) and any(rare or [])
    extra = int(marks) + int(strip is not None)
    ph, pw = height - 2 - extra, width - LABEL_W - 1
    if ph < 2 or pw < 8:
        return out
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return note_block(out, note, pw, ph + extra)
    groups = _groups(len(values), pw)
    bar_w = max(pw // len(groups), 1)
    lo = 0.0 if y_lo is None else y_lo
    vmax = max(max(finite), lo + 1e-12)
    bars = []
    for g in groups:
        vs = [values[i] for i in g if math.isfinite(values[i])]
        v = sum(vs) / len(vs) if vs else lo
        bars.append((round((v - lo) / (vmax - lo) * ph * 8), bool(rare) and any((rare or [])[i] for i in g)))
    labels = {0: vmax, ph - 1: lo}
    for r in range(ph):
        level = (ph - 1 - r) * 8  # eighths below this row
        if r in labels:
            out.append(f"{y_fmt.format(fmt_num(labels[r])):>{LABEL_W}}┤", style="dim")
        else:
            out.append(" " * LABEL_W + "│", style="dim")
        for eighths, is_rare in bars:
            fill = min(max(eighths - level, 0), 8)
            ch = EIGHTHS[fill]
            if mono and is_rare and fill:
                ch = "▒" if fill >= 4 else "░"
            style = "" if mono else ("bold red" if is_rare else color)
            out.append(ch * bar_w, style=style)
        out.append("\n")
    if marks:
        out.append(f"{'rare':>{LABEL_W}}│", style="dim")
        for _, is_rare in bars:
            out.append((RARE_GLYPH if is_rare else " ").center(bar_w), style="" if mono else "bold red")
        out.append("\n")
    if strip is not None:
        _strip_row(out, strip, strip_label, groups, bar_w, mono)
    out.append(" " * LABEL_W + "└", style="dim")
    out.append(_tick_axis(ticks or {}, groups, bar_w, pw), style="dim")
    return out


def _strip_row(out: Lines, strip: list[float], label: str, groups: list[range], bar_w: int, mono: bool) -> None:
    """One row under the bars: each bar group's mean of `strip` (in [0, 1]) as a shade and a colour."""
    out.append(f"{label:>{LABEL_W}}│", style="dim")
    for g in groups:
        vs = [strip[i] for i in g if i < len(strip) and math.isfinite(strip[i])]
        if not vs:
            out.append(" " * bar_w)
            continue
        v = min(max(sum(vs) / len(vs), 0.0), 1.0)
        k = min(int(v * len(ACC_COLORS)), len(ACC_COLORS) - 1)
        shade = SHADES[1 + min(int(v * 4), 3)]
        out.append(shade * bar_w, style="" if mono else ACC_COLORS[k])
    out.append("\n")


def _tick_axis(ticks: dict[int, str], groups: list[range], bar_w: int, pw: int) -> str:
    """The x axis under the bars: each tick's label under its bar group, where it does not touch another."""
    axis = [" "] * pw
    for i, label in ticks.items():
        col = next((k for k, g in enumerate(groups) if i in g), None)
        if col is None:
            continue
        c = min(col * bar_w, pw - len(label))
        if all(ch == " " for ch in axis[max(c - 1, 0) : c + len(label) + 1]):
            axis[c : c + len(label)] = label
    return "".join(axis)


def render_heat(
    title: str,
    frames: list[tuple[int, tuple[float, ...]]],
    width: int,
    height: int,
    mono: bool,
    note: str = "",
    legend: str = "",
) -> Lines:
    """Rows are tokens (grouped to fit), columns are snapshots in time; shade is log10 of the value.

    The shade spans the 2nd to the 98th percentile of the values drawn, so one outlying snapshot (the first
    steps' large gradients) does not push every other cell to one end; a glyph of the ░▒▓█ ramp carries the
    level in colour too, so the map reads in a text capture and without colour vision."""
    out = Lines()
    _title(out, title, legend, width)
    ph, pw = height - 2, width - LABEL_W - 1
    if ph < 2 or pw < 8:
        return out
    if not frames:
        return note_block(out, note, pw, ph)
    n_tok = len(frames[0][1])
    rows = _groups(n_tok, ph)
    # evenly spaced snapshots, the first and the last included (the axis names both steps)
    cols = [frames[round(c * (len(frames) - 1) / (pw - 1))] for c in range(pw)] if len(frames) > pw else frames
    col_w = max(pw // len(cols), 1)
    logs = [[math.log10(max(sum(f[i] for i in g) / len(g), 1e-12)) for g in rows] for _, f in cols]
    flat = sorted(v for col in logs for v in col if v > -12)
    lo, hi = (flat[round(0.02 * (len(flat) - 1))], flat[round(0.98 * (len(flat) - 1))]) if flat else (0.0, 1.0)
    span = max(hi - lo, 1e-9)
    ramp = SHADES if mono else HEAT
    for r, g in enumerate(rows):
        # a row stands for the tokens g[0]..g[-1]: the first and last rows say which
        label = (f"{g[0]}" if len(g) == 1 else f"{g[0]}-{g[-1]}") if r in (0, len(rows) - 1) else ""
        out.append(f"{label:>{LABEL_W}}│", style="dim")
        for col in logs:
            v = col[r]
            k = 0 if v <= -12 else min(max(int((v - lo) / span * (len(ramp) - 1) + 0.5), 0), len(ramp) - 1)
            if mono:
                out.append(ramp[k] * col_w)
            else:  # the level twice: the colour, and a shade glyph (░ lowest, never blank for a value)
                glyph = " " if v <= -12 else SHADES[1 + k * (len(SHADES) - 2) // (len(ramp) - 1)]
                out.append(glyph * col_w, style=ramp[k])
        out.append("\n")
    # the first and last steps; where both do not fit, the words go before a number is ever cut
    end = fmt_step(cols[-1][0])
    axis = ""
    for first, last in ((str(cols[0][0]), f"step {end}"), (str(cols[0][0]), end), ("", end)):
        if len(first) + len(last) + (1 if first else 0) <= pw:
            axis = first.ljust(pw - len(last)) + last
            break
    out.append(" " * LABEL_W + "└", style="dim")
    out.append(axis, style="dim")
    return out
