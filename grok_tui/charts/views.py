"""The lab's charts as data: which columns each chart draws, and what it says when its probe is off.

Every step chart of a view shares one `Axis`: log or linear, a zoom window, the cursor and the EMA
smoothing. The per-token charts take `at`, the time scrubber's step (None: the latest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from engine.events import Status
from grok_tui.charts.canvas import Line, Plot, fmt_num, fmt_step
from grok_tui.charts.series import Point, Raw, Trace, axis_frac, axis_step, bucketed, ema
from grok_tui.rundata import RunData

COLORS = ("cyan", "magenta", "yellow", "green", "red", "blue", "white", "bright_cyan")
GLYPHS = ("+", "*", "o", "x", "#", "%", "@", "=")


def probe_hint(probe: str) -> str:
    """`probe off: --set probe.X_every=N` with N the engine's default cadence (engine.probes)."""
    from engine.probes import DEFAULT_CADENCES  # imported once the run has started (torch is loaded)

    key = f"probe.{probe}_every"  # its cadence key (engine/config/fields.py ProbeConfig)
    return f"probe off: --set {key}={DEFAULT_CADENCES[key]}"


@dataclass(frozen=True)
class Axis:
    """What the step charts of a view share (frozen: part of the charts' redraw stamp)."""

    log: bool = True
    window: tuple[float, float] | None = None  # zoomed into these steps
    cursor: float | None = None  # the cursor's position on the axis, 0..1
    smooth: float = 0.0  # EMA weight; 0 = raw

    def bounds(self, x_max: float) -> tuple[float, float]:
        return self.window if self.window is not None else (0.0, x_max)

    def cursor_step(self, x_max: float) -> float | None:
        if self.cursor is None:
            return None
        lo, hi = self.bounds(x_max)
        return axis_step(self.cursor, hi, self.log, lo)


def _line_points(trace: Trace | None, raw: Raw | None, axis: Axis, x_max: float) -> tuple[list[Point], list[Point]]:
    """(points, faint raw points under an EMA); the fast bucketed path when not zoomed or smoothed."""
    if raw is None or trace is None:
        return [], []
    if axis.window is None and not axis.smooth:
        return [Point(p.fx, p.lo, p.hi, p.last) for p in trace.points(axis.log)], []
    lo, hi = axis.bounds(x_max)
    pts = bucketed(raw.xs, raw.ys, lo, hi, axis.log)
    if not axis.smooth:
        return pts, []
    return bucketed(raw.xs, ema(raw.ys, axis.smooth), lo, hi, axis.log), pts


def row_step(raws: list[Raw | None], cursor: float | None) -> float | None:
    """The step of the logged row the cursor reads: the row nearest to the cursor's step in the first series that
    has one there. The cursor's label and its ▼ stand at this step, so a readout never names a step that was not
    evaluated (TensorBoard's hover names the step of the point it reads); None without a cursor."""
    if cursor is None:
        return None
    for raw in raws:
        hit = raw.at(cursor) if raw is not None else None
        if hit is not None:
            return hit[0]
    return cursor


def _readout(raw: Raw | None, step: float, smooth: float) -> str:
    """The value `raw` logged at `step`, or at its nearest row, which then names its own step (`0.31 @2,000`)."""
    hit = raw.at(step) if raw is not None else None
    if hit is None:
        return "-"
    at = "" if hit[0] == step else f" @{fmt_step(hit[0])}"
    if smooth:
        i = raw.xs.index(hit[0])  # type: ignore[union-attr]
        return fmt_num(ema(raw.ys[: i + 1], smooth)[-1]) + at  # type: ignore[union-attr]
    return fmt_num(hit[1]) + at


def _plot(data: RunData, title: str, columns: list[tuple[str, str]], axis: Axis, probe: str = "", **kw: Any) -> Plot:
    """A line plot of `columns` [(column, label)]; says so if the probe behind them is off."""
    with data.lock:
        x_max = float(data.max_steps)
        lo, hi = axis.bounds(x_max)
        cursor = row_step([data.raw.get(col) for col, _ in columns], axis.cursor_step(x_max))
        lines, faint = [], []
        for i, (col, label) in enumerate(columns):
            color, glyph = COLORS[i % len(COLORS)], GLYPHS[i % len(GLYPHS)]
            raw = data.raw.get(col)
            pts, under = _line_points(data.traces.get(col), raw, axis, x_max)
            if cursor is not None and pts:
                label = f"{label} {_readout(raw, cursor, axis.smooth)}"
            lines.append(Line(label, pts, color, glyph))
            if under:
                faint.append(Line("", under, f"dim {color}", "·"))
        note = ""
        if data.status == Status.IDLE:
            note = "no run: press n to start one"
        elif not data.columns:
            note = "waiting for the run…"
        elif probe and not any(data.has(c) for c, _ in columns):
            note = probe_hint(probe)
        if axis.smooth:
            title += f" · EMA {axis.smooth:g}"
        drawn = [ln for ln in lines if ln.points]
        return Plot(title, faint + drawn, hi, axis.log, note=note, x_lo=lo, cursor=cursor, **kw)


def phase_markers(data: RunData) -> list[tuple[float, str]]:
    """M at the memorized step, G at the generalized step, C and U at circuit formation and cleanup
    (engine/train/phases.py), F and I at a fork's step and interventions, on every step chart."""
    ph = data.phases
    marks = ((ph.memorized_step, "M"), (ph.generalized_step, "G"), (ph.circuit_step, "C"), (ph.cleanup_step, "U"))
    # F at a fork's step, I at an intervention at another step (docs/FORK.md)
    return [(float(step), mark) for step, mark in marks if step is not None] + [
        (float(step), mark) for step, mark in data.fork_marks
    ]


def accuracy(data: RunData, axis: Axis) -> Plot:
    # val rare: test pairs holding one of the probe.rare_k least-trained tokens (engine/task/metrics.py, Fig. 4)
    cols = [("train_acc", "train"), ("val_acc", "val"), ("val_acc_rare", "val rare")]
    return _plot(data, "accuracy", cols, axis, y_range=(0.0, 1.0), markers=phase_markers(data))


def loss(data: RunData, axis: Axis) -> Plot:
    cols = [("train_loss", "train"), ("val_loss", "val")]
    return _plot(data, "loss (log y)", cols, axis, y_log=True, markers=phase_markers(data))


def curvature(data: RunData, axis: Axis) -> Plot:
    # λmax of the Hessian restricted to E and to W (Figs. 7, 9): train accuracy reaches 100% as
    # λmax(W) starts to fall, validation accuracy rises as λmax(E) falls; M and G mark those steps.
    # The probe's options name its columns (engine/probes/hessian.py): hess_E_abs_l2 is the paper's
    # reading, hess_Wall covers every downstream weight; the curve shows whichever this run logged.
    suffix = next((c[len("hess_E") :] for c in data.columns if c.startswith("hess_E")), "")
    w = "Wall" if data.has(f"hess_Wall{suffix}") else "W"
    w_label = "W (all)" if w == "Wall" else "W"
    cols = [(f"hess_E{suffix}", "E"), (f"hess_{w}{suffix}", w_label), (f"hess_all{suffix}", "θ")]
    title = "λmax (log y)" + {"": "", "_abs": " |λ|", "_l2": " +L2", "_abs_l2": " |λ| +L2"}.get(suffix, "")
    return _plot(data, title, cols, axis, probe="hessian", y_log=True, markers=phase_markers(data))


def ranks(data: RunData, axis: Axis) -> Plot:
    # Numerical rank of E, W and EW (Fig. 10).
    cols = [("rank_E", "E"), ("rank_W", "W"), ("rank_EW", "EW")]
    return _plot(data, "rank", cols, axis, probe="rank", markers=phase_markers(data))


def ratios(data: RunData, axis: Axis) -> Plot:
    # σmax(E)/σmax(W) (the rank probe's sigma_ratio column) against the c in force (Adam-LR, §4.3, eq. 24).
    cols = [("sigma_ratio", "σE/σW"), ("lr_ratio", "c")]
    plot = _plot(data, "σmax ratio, c (log y)", cols, axis, y_log=True, markers=phase_markers(data))
    if data.columns and not data.has("sigma_ratio"):
        plot.title = "c (log y) · σ ratio: " + probe_hint("rank")
    return plot


def balance(data: RunData, axis: Axis) -> Plot:
    # A row's balance (§4.2, eqs. 3-6; engine/probes/balance.py): along each row of E, the loss gradient's
    # push against the decay's pull, summed between evaluations, the targets' mean against the others'
    # median. Where the decay's line lies below the gradient's mirror, decay wins and the row shortens.
    cols = [
        ("target_grad_step", "T-grad"),
        ("target_decay_step", "T-decay"),
        ("other_grad_step", "rest-grad"),
        ("other_decay_step", "rest-decay"),
    ]
    title = "row balance (T: targets)"
    plot = _plot(data, title, cols, axis, markers=phase_markers(data))
    if data.columns and not data.has("target_grad_step"):
        plot.note = "probe off: --set probe.balance=true"
    return plot


# Columns compare can overlay, with the y range they are drawn on (None: fitted; "log": log y).
COMPARE_COLUMNS: dict[str, tuple[str, tuple[float, float] | None, bool]] = {
    "val_acc": ("val accuracy", (0.0, 1.0), False),
    "train_acc": ("train accuracy", (0.0, 1.0), False),
    "val_acc_rare": ("val accuracy on rare tokens", (0.0, 1.0), False),
    "val_loss": ("val loss (log y)", None, True),
    "train_loss": ("train loss (log y)", None, True),
    "hess_E": ("λmax(E) (log y)", None, True),
    "hess_W": ("λmax(W) (log y)", None, True),
    "rank_E": ("rank E", None, False),
    "rank_W": ("rank W", None, False),
    "rank_EW": ("rank EW", None, False),
    "sigma_ratio": ("σmax(E)/σmax(W) (log y)", None, True),
    "target_grad_step": ("targets' gradient push along their rows", None, False),
    "target_decay_step": ("targets' decay pull along their rows", None, False),
    "target_norm": ("targets' row norm / ring radius", None, False),
}


def compare(
    runs: list[tuple[int, RunData]], axis: Axis, column: str = "val_acc", x_max: float = 1.0, numbered: bool = True
) -> Plot:
    """One column of several runs on one step axis (the paper's comparisons, Figs. 4-6).

    Each run is (k, data): k fixes its colour and glyph and its number in the key, so a run keeps
    its colour while others are toggled. The axis ends at the longest run's max_steps, or at
    `x_max` if that is further."""
    for _, d in runs:
        with d.lock:
            x_max = max(x_max, d.max_steps)
    lo, hi = axis.bounds(x_max)
    cursor = axis.cursor_step(x_max)
    for _, d in runs:  # the first run with a row there names the step (row_step); another run's row names its own
        with d.lock:
            raw = d.raw.get(column)
            hit = raw.at(cursor) if raw is not None and cursor is not None else None
        if hit is not None:
            cursor = hit[0]
            break
    lines, keys = [], []
    for k, d in runs:
        with d.lock:
            raw = d.raw.get(column)
            if raw is None:
                pts: list[Point] = []
            elif axis.window is None and not axis.smooth and d.traces.get(column) is not None:
                pts = _rebucket(d.traces[column], x_max, axis.log)
            else:
                pts = bucketed(raw.xs, ema(raw.ys, axis.smooth) if axis.smooth else raw.ys, lo, hi, axis.log)
            name = d.label or d.preset
        label = f"{k + 1}" if numbered else name
        if cursor is not None and pts:
            label += f" {_readout(raw, cursor, axis.smooth)}"
        lines.append(Line(label, pts, COLORS[k % len(COLORS)], GLYPHS[k % len(GLYPHS)]))
        if numbered:
            keys.append(f"{k + 1} {name}")
    title, y_range, y_log = COMPARE_COLUMNS.get(column, (column, None, False))
    note = "no runs selected" if not runs else f"no {column} yet"
    return Plot(
        title, lines, hi, axis.log, y_log=y_log, y_range=y_range, note=note, x_lo=lo, cursor=cursor, legend=keys
    )


def _rebucket(t: Trace, x_max: float, log_x: bool) -> list[Point]:
    """Move a trace's points onto an axis that ends at `x_max` (runs of different lengths)."""
    out = []
    for p in t.points(log_x):
        x = axis_step(p.fx, t.x_max, log_x)
        out.append(Point(axis_frac(x, x_max, log_x), p.lo, p.hi, p.last))
    return out


def rare_mask(data: RunData, n: int) -> list[bool]:
    """The rare set val_acc_rare is measured on, as the engine logged it (RunStarted's token sets)."""
    rare = set(data.tokens.rare)
    if not data.p or n < data.p or not rare:
        return []
    return [i in rare for i in range(n)]


def token_bars(data: RunData, at: int | None = None) -> dict[str, Any]:
    """Per-token update counts over the p+2 tokens relative to their mean (a skewed split, §4.2,
    Fig. 8, moves them apart by a few percent), the rare tokens marked ▲, and beside each token the
    val accuracy of the test pairs that hold it (engine/task/metrics.py)."""
    with data.lock:
        snap = data.token_history.at(at)
        step = snap[0] if snap else 0
        updates, accs = snap[1] if snap else ((), ())
        p = data.p or max(len(updates) - 2, 0)
        idle = data.status == Status.IDLE
    values = [float(v) for v in updates]
    rare = rare_mask(data, len(values)) if values else []
    ops = values[:p] or values
    mean = sum(ops) / len(ops) if ops else 0.0
    rel = [v / mean if mean > 0 else math.nan for v in values]
    finite = [v for v in rel[:p] if math.isfinite(v)]
    # the scale starts just below the common tokens, not at 0: a starved rare token (a few % of the
    # mean on the token-skewed split) then shows as an empty bar over its ▲, and the spread of the
    # others stays readable
    common = [v for i, v in enumerate(rel[:p]) if math.isfinite(v) and not (rare and rare[i])] or finite
    y_lo = None
    if common:
        lo, hi = min(common), max(finite)
        y_lo = max(lo - 0.25 * max(hi - lo, 0.01), 0.0)
    ticks = {0: "0", p // 2: str(p // 2), p - 1: str(p - 1)} if p else {}  # operand tokens only
    legend = f"step {fmt_step(step)} · mean {fmt_num(mean)}" if values else ""
    marked = [i for i, r in enumerate(rare[:p] if p else rare) if r]
    if values and marked:  # which tokens are rare, by id: the ▲ under their bars
        legend += f" · ▲ rare ({len(marked)}): {' '.join(map(str, marked))}"
    strip = [a if isinstance(a, float) else math.nan for a in accs] if accs else None
    return {
        "title": "updates÷mean" + (" (scrubbed)" if at is not None else ""),
        "values": rel[:p] if p and len(rel) > p else rel,  # op and '=' occur in every pair: off the scale
        "rare": rare[:p] if p else rare,
        "legend": legend,
        "ticks": ticks,
        "note": "no run: press n to start one"
        if idle
        else (f"step {step}: no updates yet" if values else "waiting for the first evaluation…"),
        "y_lo": y_lo,
        "y_fmt": "{}×",
        "strip": strip[:p] if strip is not None and p else strip,
        "strip_label": "val acc",
    }


def fourier_bars(data: RunData, at: int | None = None) -> dict[str, Any]:
    """‖DFT of E‖ over frequencies 0..⌊p/2⌋ (App. C.3, Fig. 11), at the scrubber's step."""
    with data.lock:
        snap = data.fourier_history.at(at)
        off = data.probe_off("fourier")
    step, values = (snap[0], list(snap[1])) if snap else (0, [])
    n = len(values)
    # the y axis starts just below the smallest bar, not at 0: E's spectrum is nearly flat early on, and
    # from 0 every bar would fill most of the height, the key frequencies differing in the top rows only
    finite = [v for v in values if math.isfinite(v)]
    lo = max(min(finite) - 0.1 * (max(finite) - min(finite)), 0.0) if finite else None
    return {
        "title": "Fourier spectrum of E" + (" (scrubbed)" if at is not None else ""),
        "values": values,
        "y_lo": lo,
        "legend": (f"step {fmt_step(step)} · y from {fmt_num(lo)}" if lo else f"step {fmt_step(step)}")
        if values
        else "",
        "ticks": {0: "0", n // 2: str(n // 2), n - 1: str(n - 1)} if n else {},
        "note": probe_hint("fourier") if off else "waiting for the Fourier probe…",
        "color": "green",
    }


def grad_heat(data: RunData, at: int | None = None) -> dict[str, Any]:
    """Per-token embedding gradient norms over time (Fig. 3), up to the scrubber's step."""
    with data.lock:
        frames = data.grad.upto(at)
        off = data.probe_off("grad")
    return {
        "title": "‖∇e‖ per token (rows) over time (log)" + (" (scrubbed)" if at is not None else ""),
        "frames": frames,
        "note": probe_hint("grad") if off else "waiting for the gradient probe…",
    }
