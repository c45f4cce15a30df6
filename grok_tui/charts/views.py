"""The lab's charts as data: which columns each chart draws, and what it says when its probe is off."""

from __future__ import annotations

import math
from typing import Any

from grok_tui.charts.canvas import Line, Plot, fmt_num
from grok_tui.charts.series import Point, Trace, axis_frac
from grok_tui.rundata import RunData

COLORS = ("cyan", "magenta", "yellow", "green", "red", "blue", "white", "bright_cyan")
GLYPHS = ("+", "*", "o", "x", "#", "%", "@", "=")

# Each probe's cadence key, for the "probe off" hint (engine/config.py ProbeConfig).
PROBE_HINT = {
    "hessian": "probe off: --set probe.hessian_every=500",
    "rank": "probe off: --set probe.rank_every=500",
    "fourier": "probe off: --set probe.fourier_every=500",
    "grad": "probe off: --set probe.grad_every=500",
}


def _points(data: RunData, column: str, log: bool) -> list[Point]:
    t = data.traces.get(column)
    return [Point(p.fx, p.lo, p.hi, p.last) for p in t.points(log)] if t else []


def _plot(data: RunData, title: str, columns: list[tuple[str, str]], log_x: bool, probe: str = "", **kw: Any) -> Plot:
    """A line plot of `columns` [(column, label)]; says so if the probe behind them is off."""
    with data.lock:
        lines = [
            Line(label, _points(data, col, log_x), COLORS[i % len(COLORS)], GLYPHS[i % len(GLYPHS)])
            for i, (col, label) in enumerate(columns)
        ]
        note = ""
        if not data.columns:
            note = "waiting for the run…"
        elif probe and not any(data.has(c) for c, _ in columns):
            note = PROBE_HINT[probe]
        return Plot(title, [ln for ln in lines if ln.points], data.max_steps, log_x, note=note, **kw)


def phase_markers(data: RunData) -> list[tuple[float, str]]:
    """M at the memorized step, G at the generalized step, on every step-axis chart."""
    out = []
    if data.memorized_step is not None:
        out.append((float(max(data.memorized_step, 1)), "M"))
    if data.generalized_step is not None:
        out.append((float(max(data.generalized_step, 1)), "G"))
    return out


def accuracy(data: RunData, log_x: bool) -> Plot:
    cols = [("train_acc", "train"), ("val_acc", "val")]
    return _plot(data, "accuracy", cols, log_x, y_range=(0.0, 1.0), markers=phase_markers(data))


def loss(data: RunData, log_x: bool) -> Plot:
    cols = [("train_loss", "train"), ("val_loss", "val")]
    return _plot(data, "loss (log y)", cols, log_x, y_log=True, markers=phase_markers(data))


def curvature(data: RunData, log_x: bool) -> Plot:
    # λmax of the Hessian restricted to E and to W (Figs. 7, 9): train accuracy reaches 100% as
    # λmax(W) starts to fall, validation accuracy rises as λmax(E) falls; M and G mark those steps.
    cols = [("hess_E", "λmax(E)"), ("hess_W", "λmax(W)"), ("hess_all", "λmax(θ)")]
    return _plot(data, "curvature λmax (log y)", cols, log_x, probe="hessian", y_log=True, markers=phase_markers(data))


def ranks(data: RunData, log_x: bool) -> Plot:
    # Numerical rank of E, W and EW (Fig. 10).
    cols = [("rank_E", "rank E"), ("rank_W", "rank W"), ("rank_EW", "rank EW")]
    return _plot(data, "rank", cols, log_x, probe="rank", markers=phase_markers(data))


def ratios(data: RunData, log_x: bool) -> Plot:
    # σmax(E)/σmax(W) against the c in force (Adam-LR, §4.3, eq. 24).
    cols = [("sigma_ratio", "σmax(E)/σmax(W)"), ("lr_ratio", "c = lr_E/lr")]
    plot = _plot(data, "σ ratio and c (log y)", cols, log_x, y_log=True, markers=phase_markers(data))
    if data.columns and not data.has("sigma_E"):
        plot.title = "c (log y) · σmax(E)/σmax(W) " + PROBE_HINT["rank"]
    return plot


def compare(runs: list[RunData], log_x: bool, x_max: float = 1.0) -> Plot:
    """Validation accuracy of several runs on one axis (the paper's comparisons, Figs. 4-6); the
    axis ends at the longest run's max_steps, or at `x_max` if that is further."""
    for d in runs:
        with d.lock:
            x_max = max(x_max, d.max_steps)
    lines = []
    for i, d in enumerate(runs):
        with d.lock:
            t = d.traces.get("val_acc")
            pts = _rebucket(t, x_max, log_x) if t is not None else []
        lines.append(Line(d.label or d.preset, pts, COLORS[i % len(COLORS)], GLYPHS[i % len(GLYPHS)]))
    note = "no runs selected" if not runs else "no val_acc yet"
    return Plot("val accuracy", lines, x_max, log_x, y_range=(0.0, 1.0), note=note)


def _rebucket(t: Trace, x_max: float, log_x: bool) -> list[Point]:
    """Move a trace's points onto an axis that ends at `x_max` (runs of different lengths)."""
    out = []
    for p in t.points(log_x):
        x = 10 ** (p.fx * math.log10(max(t.x_max, 10.0))) if log_x else p.fx * t.x_max
        out.append(Point(axis_frac(x, x_max, log_x), p.lo, p.hi, p.last))
    return out


def token_bars(data: RunData) -> dict[str, Any]:
    """Per-token update counts over the p+2 tokens, coloured by how rare each token is in the
    training split, so a skewed split (§4.2, Fig. 8) shows at a glance."""
    with data.lock:
        values = [float(v) for v in data.updates]
        freq = list(data.token_freq)
        p = int(data.config.get("data", {}).get("p", max(len(values) - 2, 0)))
    rare: list[bool] = []
    ops = freq[:p] or values[:p]
    if ops and len(freq) in (0, len(values)):
        # A token is rare when it occurs less than half as often as the most common operand;
        # b is drawn uniformly in every split, so only a skewed split crosses that line.
        top = max(ops)
        rare = [v < 0.5 * top for v in ops] + [False] * (len(values) - len(ops))
    ticks = {0: "0", p // 2: str(p // 2), p - 1: str(p - 1), p: "op", p + 1: "="} if p else {}
    legend = ""
    if values:
        lo, hi = min(values[:p] or values), max(values[:p] or values)
        legend = f"operands {fmt_num(lo)}..{fmt_num(hi)}; {sum(rare)} rare in train split (< ½ max)"
    return {
        "title": "updates per token",
        "values": values,
        "rare": rare,
        "legend": legend,
        "ticks": ticks,
        "note": "waiting for the first evaluation…",
    }


def fourier_bars(data: RunData) -> dict[str, Any]:
    """‖DFT of E‖ over frequencies 0..⌊p/2⌋ (App. C.3, Fig. 11)."""
    with data.lock:
        values = list(data.fourier)
        step = data.fourier_step
        off = bool(data.columns) and not data.config.get("probe", {}).get("fourier_every", 0)
    n = len(values)
    return {
        "title": "Fourier spectrum of E",
        "values": values,
        "legend": f"step {step}" if values else "",
        "ticks": {0: "0", n // 2: str(n // 2), n - 1: str(n - 1)} if n else {},
        "note": PROBE_HINT["fourier"] if off else "waiting for the Fourier probe…",
        "color": "green",
    }


def grad_heat(data: RunData) -> dict[str, Any]:
    """Per-token embedding gradient norms over time (Fig. 3)."""
    with data.lock:
        frames = list(data.grad.items)
        off = bool(data.columns) and not data.config.get("probe", {}).get("grad_every", 0)
    return {
        "title": "‖∇e_token‖ over time (log)",
        "frames": frames,
        "note": PROBE_HINT["grad"] if off else "waiting for the gradient probe…",
    }
