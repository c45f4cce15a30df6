"""Cost of one chart redraw: grok_tui's braille canvas against plotext (what `grok plot` draws with).

    .venv/bin/python bench/bench_charts.py

Both draw train and val accuracy of a 100k-step run evaluated every 100 steps (1,000 values per
series) on a log step axis, in a 78x20 box, from the same points: the capped series the canvas
draws (grok_tui.charts.series.Trace, one point per bucket), mapped back to steps for plotext. A
second line gives plotext every one of the 1,000 values, as a chart without a cap would.
"""

from __future__ import annotations

import math
import time

import plotext as plt

from grok_tui.charts.canvas import Line, Plot, render_plot
from grok_tui.charts.series import Trace, axis_step

STEPS, EVERY, W, H, N = 100_000, 100, 78, 20, 50


def curves() -> tuple[list[float], list[float], list[float]]:
    xs = [float(s) for s in range(EVERY, STEPS + 1, EVERY)]
    tr = [min(1.0, math.log10(x) / 3) for x in xs]
    va = [1 / (1 + math.exp(-8 * (math.log10(x) - 4))) for x in xs]
    return xs, tr, va


def traces(xs: list[float], tr: list[float], va: list[float]) -> tuple[Trace, Trace]:
    t_tr, t_va = Trace(STEPS), Trace(STEPS)
    for x, a, b in zip(xs, tr, va, strict=True):
        t_tr.add(x, a)
        t_va.add(x, b)
    return t_tr, t_va


def capped(t: Trace) -> tuple[list[float], list[float]]:
    """The canvas's points of a trace as (step, value) lists: what plotext gets in the fair comparison."""
    pts = t.points(True)
    return [axis_step(p.fx, STEPS, True) for p in pts], [p.last for p in pts]


def canvas_ms(t_tr: Trace, t_va: Trace) -> float:
    t0 = time.perf_counter()
    for _ in range(N):
        lines = [Line("train", t_tr.points(True), "cyan", "+"), Line("val", t_va.points(True), "magenta", "*")]
        render_plot(Plot("accuracy", lines, STEPS, True, y_range=(0, 1)), W, H, mono=False)
    return (time.perf_counter() - t0) / N * 1000


def plotext_ms(xs: list[float], tr: list[float], xv: list[float], va: list[float]) -> float:
    t0 = time.perf_counter()
    for _ in range(N):
        plt.clear_figure()
        plt.plot_size(W, H)
        plt.xscale("log")
        plt.plot(xs, tr, label="train", marker="braille")
        plt.plot(xv, va, label="val", marker="braille")
        plt.build()
    return (time.perf_counter() - t0) / N * 1000


def main() -> None:
    xs, tr, va = curves()
    t_tr, t_va = traces(xs, tr, va)
    (x1, y1), (x2, y2) = capped(t_tr), capped(t_va)
    c = canvas_ms(t_tr, t_va)
    p = plotext_ms(x1, y1, x2, y2)
    print(
        f"one {W}x{H} redraw, the same 2 x {len(x1)} points: canvas {c:.2f} ms, plotext {p:.2f} ms, ratio {p / c:.1f}x"
    )
    p_all = plotext_ms(xs, tr, xs, va)
    print(f"plotext given all 2 x {len(xs)} values: {p_all:.2f} ms (a chart without a cap)")


if __name__ == "__main__":
    main()
