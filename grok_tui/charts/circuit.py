"""The Circuit view as data: the progress measures' losses, the key frequencies over time, the embedding ring.

The progress probe (engine/probes/progress.py, docs/PROBES.md) measures restricted and excluded loss
(Nanda et al. 2023) and E's rows in the plane of the strongest key frequency, where the ideal ring
(Liu et al. 2022) is the unit circle. Per-token charts take `at`, the time scrubber's step.
"""

from __future__ import annotations

import math
from typing import Any

from rich.text import Text

from engine.events import JOIN_SHARE, CircuitLogged
from grok_tui.charts.blocks import RARE_GLYPH
from grok_tui.charts.canvas import Plot, fmt_step, note_block
from grok_tui.charts.lines import Lines
from grok_tui.charts.views import Axis, _plot, phase_markers
from grok_tui.rundata import RunData

HINT = "probe off: --set probe.progress_every=100"
RING_SPAN = 1.8  # the ring plot shows x, y in [-RING_SPAN, RING_SPAN]; the ideal ring has radius 1
COMMON_GLYPH, CIRCLE_GLYPH = "o", "·"


def _off(data: RunData) -> bool:
    return data.probe_off("progress")


def losses(data: RunData, axis: Axis) -> Plot:
    """Restricted, excluded, train and test loss on one log axis (Nanda et al. 2023, Fig. 7)."""
    cols = [("restricted_loss", "restricted"), ("excluded_loss", "excl"), ("train_loss", "train")]
    cols.append(("val_loss", "test"))
    # no title: the four keys alone fill half of an 80-column screen (the y ticks say the axis is log)
    plot = _plot(data, "", cols, axis, y_log=True, markers=phase_markers(data))
    if _off(data):
        plot.note, plot.lines = HINT, []
    return plot


def _snapshot(data: RunData, at: int | None) -> CircuitLogged | None:
    with data.lock:
        snap = data.circuit_history.at(at)
    return snap[1] if snap else None


def _over_chance(ev: CircuitLogged) -> tuple[float, ...]:
    from engine.probes.progress import chance_share  # torch: loaded once a run has started

    n = len(ev.tokens) or 2 * len(ev.shares)
    chance = chance_share(n)
    return tuple(max(v / chance, 1.0) if math.isfinite(v) else 1.0 for v in ev.shares)


def key_heat(data: RunData, at: int | None = None) -> dict[str, Any]:
    """Each frequency's share of the logits' non-constant energy (rows: w) over time, up to the scrubber."""
    with data.lock:
        # shade: log of each share over the chance share, floored at chance, so that a run with no circuit
        # (every frequency near chance) stays dark instead of being stretched over the colour ramp
        frames = [(s, (1.0, *_over_chance(ev))) for s, ev in data.circuit_history.upto(at)]  # row index = w
    last = _snapshot(data, at)
    keys = ", ".join(str(k) for k in last.keys) if last and last.keys else "none"
    return {
        "title": "freq w" + (" (scrubbed)" if at is not None else ""),  # rows: w; shade: log share/chance
        "frames": frames,
        "legend": f"key {keys} · step {fmt_step(last.step)}" if last else "",
        "note": HINT if _off(data) else "waiting for the progress probe…",
    }


def ring_view(data: RunData, at: int | None = None) -> dict[str, Any]:
    """E's rows in the plane of the strongest key frequency at the scrubber's step: one point per token."""
    ev = _snapshot(data, at)
    note = HINT if _off(data) else "waiting for the progress probe…"
    if ev is None or not ev.tokens:
        if ev is not None:
            note = "this model has no embedding E: no ring"
        return {"title": "embedding ring", "points": (), "legend": "", "note": note}
    members = [m >= JOIN_SHARE for m in ev.membership]
    rare = ev.rare or tuple(False for _ in ev.tokens)
    n_rare = sum(rare)
    rare_in = sum(1 for r, m in zip(rare, members, strict=True) if r and m)
    legend = f"step {fmt_step(ev.step)} · {sum(members)}/{len(members)} in ring"
    if n_rare:
        legend += f" · rare {RARE_GLYPH} {rare_in}/{n_rare}"
    freq = f" w={ev.ring_freq}" if ev.ring_freq else ""
    return {
        "title": f"embedding ring{freq}" + (" (scrubbed)" if at is not None else ""),
        "points": tuple(zip(ev.x, ev.y, rare, members, strict=True)),
        "legend": legend,
        "note": note,
    }


def render_ring(
    title: str, points: tuple[tuple[float, float, bool, bool], ...], width: int, height: int, mono: bool, **kw: Any
) -> Lines:
    """A scatter of (x, y) on a square of side 2·RING_SPAN (two columns per row: terminal cells are tall), the
    ideal unit ring dotted. Common tokens `o`, rare ones ▲ (drawn over the common ones); points outside the
    square sit on its edge."""
    out = Lines()
    for text, style in ((title, "bold"), (kw.get("legend", ""), "dim")):  # the legend on its own row: 80×24
        head = Text(text, style=style)
        head.truncate(width, overflow="ellipsis")
        out.append_text(head)
        out.append("\n")
    rows = height - 2
    if rows < 3 or width < 8:
        return out
    if not points:
        return note_block(out, kw.get("note", ""), width, rows, indent=0)
    side_rows = min(rows, width // 2)
    cols = 2 * side_rows
    grid: list[list[tuple[str, str]]] = [[(" ", "")] * cols for _ in range(side_rows)]

    def cell(x: float, y: float) -> tuple[int, int]:
        c = round((min(max(x, -RING_SPAN), RING_SPAN) + RING_SPAN) / (2 * RING_SPAN) * (cols - 1))
        r = round((RING_SPAN - min(max(y, -RING_SPAN), RING_SPAN)) / (2 * RING_SPAN) * (side_rows - 1))
        return r, c

    for k in range(4 * cols):
        r, c = cell(math.cos(2 * math.pi * k / (4 * cols)), math.sin(2 * math.pi * k / (4 * cols)))
        grid[r][c] = (CIRCLE_GLYPH, "dim")
    for rare_pass in (False, True):
        for x, y, rare, member in points:
            if rare != rare_pass or not (math.isfinite(x) and math.isfinite(y)):
                continue
            r, c = cell(x, y)
            style = "" if mono else ("bold red" if rare else ("cyan" if member else "dim cyan"))
            grid[r][c] = (RARE_GLYPH if rare else COMMON_GLYPH, style)
    pad = " " * max((width - cols) // 2, 0)
    for row in grid:
        out.append(pad)
        for ch, style in row:
            out.append(ch, style=style)
        out.append("\n")
    return out
