"""Capped series, the charts' data views, and drawing: sizes, caps and what the charts say."""

from __future__ import annotations

import math

from engine.events import RunStarted, TokensLogged
from grok_tui.charts import views
from grok_tui.charts.blocks import render_bars
from grok_tui.charts.canvas import Line, Plot, render_plot
from grok_tui.charts.series import BUCKETS, Snapshots, Trace
from grok_tui.rundata import RunData


def test_trace_caps_points_and_keeps_spikes() -> None:
    t = Trace(100_000)
    for step in range(0, 100_001, 10):
        t.add(step, 1.0 if step == 55_550 else 0.0)
    for log in (False, True):
        pts = t.points(log)
        assert len(pts) <= BUCKETS
        assert max(p.hi for p in pts) == 1.0  # the one-eval spike survives downsampling
    # log buckets are finer at small steps: steps below 1k keep many points on the log axis
    assert sum(p.fx < 0.6 for p in t.points(True)) > 10 * sum(p.fx < 0.01 for p in t.points(False))


def test_trace_skips_nan() -> None:
    t = Trace(100)
    t.add(10, float("nan"))
    assert t.points(True) == [] and t.count == 0


def test_snapshots_stay_evenly_spaced_under_the_cap() -> None:
    s = Snapshots(cap=16)
    for step in range(1000):
        s.add(step, (float(step),))
    steps = [k for k, _ in s.items]
    assert len(steps) <= 16
    gaps = {b - a for a, b in zip(steps, steps[1:], strict=False)}
    assert len(gaps) == 1


def _started(freq: tuple[int, ...]) -> RunStarted:
    p = len(freq) - 2
    return RunStarted({"data": {"p": p}, "probe": {}}, "cpu", 1, 1, p + 2, freq, 0, 100, ("step",))


def test_token_bars_mark_rare_tokens_of_a_skewed_split_only() -> None:
    skewed = RunData()
    skewed.apply(_started(tuple(int(30 + 70 * math.exp(-3 * a / 10)) for a in range(11)) + (500, 500)))
    skewed.apply(TokensLogged(10, tuple(range(13))))
    spec = views.token_bars(skewed)
    assert spec["rare"][:3] == [False] * 3 and all(spec["rare"][8:11]) and not any(spec["rare"][11:])
    uniform = RunData()
    uniform.apply(_started((50,) * 11 + (500, 500)))
    uniform.apply(TokensLogged(10, (5,) * 13))
    assert not any(views.token_bars(uniform)["rare"])


def test_render_plot_fits_its_box_and_mono_uses_glyphs() -> None:
    t = Trace(1000)
    for s in range(0, 1001, 50):
        t.add(s, s / 1000)
    plot = Plot("acc", [Line("train", t.points(True), "cyan", "+")], 1000, True, y_range=(0, 1))
    for w, h in ((80, 20), (40, 10)):
        lines = render_plot(plot, w, h, mono=True).plain.split("\n")
        assert len(lines) == h and max(len(x) for x in lines) <= w
    text = render_plot(plot, 60, 12, mono=True).plain
    assert "+" in text and "log └" in text and "10" in text
    assert any(0x2800 <= ord(c) <= 0x28FF for c in render_plot(plot, 60, 12, mono=False).plain)


def test_render_bars_hatches_rare_under_no_color() -> None:
    text = render_bars("t", [10.0, 10.0, 2.0], 40, 8, mono=True, rare=[False, False, True]).plain
    assert "▒" in text or "░" in text
