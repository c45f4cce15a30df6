"""Cost of one chart redraw: grok_tui's braille canvas against plotext (what textual-plotext draws with).

    .venv/bin/python bench/bench_charts.py

Both draw train and val accuracy of a 100k-step run evaluated every 100 steps (1,000 points per
series) on a log step axis, in a 78x20 box. plotext gets every point, as a naive chart would;
the canvas gets the capped series (grok_tui.charts.series.BUCKETS points at most).
"""

from __future__ import annotations

import math
import time

import plotext as plt

from grok_tui.charts.canvas import Line, Plot, render_plot
from grok_tui.charts.series import Trace

STEPS, EVERY, W, H, N = 100_000, 100, 78, 20, 50


def curves() -> tuple[list[float], list[float], list[float]]:
    xs = [float(s) for s in range(EVERY, STEPS + 1, EVERY)]
    tr = [min(1.0, math.log10(x) / 3) for x in xs]
    va = [1 / (1 + math.exp(-8 * (math.log10(x) - 4))) for x in xs]
    return xs, tr, va


def canvas_ms(xs: list[float], tr: list[float], va: list[float]) -> float:
    t_tr, t_va = Trace(STEPS), Trace(STEPS)
    for x, a, b in zip(xs, tr, va, strict=True):
        t_tr.add(x, a)
        t_va.add(x, b)
    t0 = time.perf_counter()
    for _ in range(N):
        lines = [Line("train", t_tr.points(True), "cyan", "+"), Line("val", t_va.points(True), "magenta", "*")]
        render_plot(Plot("accuracy", lines, STEPS, True, y_range=(0, 1)), W, H, mono=False)
    return (time.perf_counter() - t0) / N * 1000


def plotext_ms(xs: list[float], tr: list[float], va: list[float]) -> float:
    t0 = time.perf_counter()
    for _ in range(N):
        plt.clear_figure()
        plt.plot_size(W, H)
        plt.xscale("log")
        plt.plot(xs, tr, label="train", marker="braille")
        plt.plot(xs, va, label="val", marker="braille")
        plt.build()
    return (time.perf_counter() - t0) / N * 1000


def main() -> None:
    xs, tr, va = curves()
    c, p = canvas_ms(xs, tr, va), plotext_ms(xs, tr, va)
    print(f"one {W}x{H} redraw, 2 x {len(xs)} points: canvas {c:.2f} ms, plotext {p:.2f} ms, ratio {p / c:.1f}x")


if __name__ == "__main__":
    main()
