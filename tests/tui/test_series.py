"""Capped series, the charts' data views, and drawing: sizes, caps and what the charts say."""

from __future__ import annotations

import itertools
import math

import pytest

from engine.config import RunConfig, apply_overrides
from engine.events import EvalLogged, RunStarted, TokensLogged
from engine.task import data as D
from engine.task.metrics import split_tokens
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
    gaps = {b - a for a, b in itertools.pairwise(steps)}
    assert len(gaps) == 1


def _started(freq: tuple[int, ...], rare_k: int = 3, **data: object) -> RunStarted:
    p = len(freq) - 2
    cfg = apply_overrides(
        RunConfig(),
        {"data.p": p, "data.op": "add", "probe.rare_k": rare_k, **{f"data.{k}": v for k, v in data.items()}},
    )
    return RunStarted(cfg, "cpu", 1, 1, p + 2, freq, 0, 100, ("step",), tokens=split_tokens(cfg))


def test_token_bars_mark_the_engines_rare_tokens_relative_to_the_mean_with_val_acc() -> None:
    skewed = RunData()
    skewed.apply(_started((0,) * 13, split="skewed", skew=3.0))
    updates = (*(100 + a for a in range(11)), 900, 900)
    acc = (*(a / 10 for a in range(11)), math.nan, math.nan)
    skewed.apply(TokensLogged(10, updates, None, acc))
    spec = views.token_bars(skewed)
    # the engine's own rare set, as RunStarted carries it: the least-trained present tokens, ties all in
    assert skewed.config is not None
    want = split_tokens(skewed.config).rare
    assert len(want) >= 3 and spec["rare"] == [t in want for t in range(11)]
    mean = sum(range(100, 111)) / 11
    assert spec["values"] == [pytest.approx((100 + a) / mean) for a in range(11)]  # op and '=' left out
    assert 0 < spec["y_lo"] < min(spec["values"])  # the scale starts near the data
    assert spec["strip"] == list(acc[:11])
    text = render_bars(width=60, height=14, mono=True, **spec).plain
    assert "▲" in text and "val acc" in text and "×" in text


def test_token_bars_leave_absent_tokens_out_of_the_rare_set() -> None:
    run = RunData()
    run.apply(_started((0,) * 13, rare_k=3, starve_k=2, starve_m=0))
    run.apply(TokensLogged(10, tuple(range(13)), None, (0.5,) * 13))
    cfg = run.config
    assert cfg is not None
    absent = D.starved_tokens(cfg.data, cfg.train.seed).tolist()
    marked = [t for t, r in enumerate(views.token_bars(run)["rare"]) if r]
    assert marked and not set(marked) & set(absent)


def test_render_plot_fits_its_box_and_mono_uses_glyphs() -> None:
    t = Trace(1000)
    for s in range(0, 1001, 50):
        t.add(s, s / 1000)
    plot = Plot("acc", [Line("train", t.points(True), "cyan", "+")], 1000, True, y_range=(0, 1))
    for w, h in ((80, 20), (40, 10)):
        lines = render_plot(plot, w, h, mono=True).plain.split("\n")
        assert len(lines) == h and max(len(x) for x in lines) <= w
    text = render_plot(plot, 60, 12, mono=True).plain
    axis = text.split("\n")[-1]
    assert "+" in text and "log └0" in axis and "step" in axis and axis.rstrip().endswith("1,000")
    assert any(0x2800 <= ord(c) <= 0x28FF for c in render_plot(plot, 60, 12, mono=False).plain)


def test_render_bars_hatches_rare_under_no_color() -> None:
    text = render_bars("t", [10.0, 10.0, 2.0], 40, 8, mono=True, rare=[False, False, True]).plain
    assert "▒" in text or "░" in text


@pytest.mark.parametrize(
    ("columns", "title", "names"),
    [
        (("step", "hess_E", "hess_W"), "λmax (log y)", ["E", "W"]),
        (("step", "hess_E_abs_l2", "hess_Wall_abs_l2"), "λmax (log y) |λ| +L2", ["E", "W (all)"]),
    ],
)
def test_curvature_draws_the_hessian_columns_the_run_logged(columns, title, names) -> None:
    # fig7_hessian's paper reading logs hess_E_abs_l2 and hess_Wall_abs_l2 (engine/probes/hessian.py)
    run = RunData()
    run.apply(RunStarted(RunConfig(), "cpu", 1, 1, 99, (1,) * 99, 0, 100, columns))
    for step in (0, 10, 20):
        run.apply(EvalLogged(step, {"step": step, **{c: 1.0 + step for c in columns if c != "step"}}))
    plot = views.curvature(run, views.Axis())
    assert plot.title == title
    assert [ln.label for ln in plot.lines] == names  # θ (hess_all) was not logged, so it is not drawn
    assert all(len(ln.points) == 3 for ln in plot.lines)


def test_the_balance_chart_draws_the_balance_columns_or_says_how_to_log_them() -> None:
    cols = ("step", "target_grad_step", "target_decay_step", "other_grad_step", "other_decay_step")
    run = RunData()
    run.apply(RunStarted(RunConfig(), "cpu", 1, 1, 99, (1,) * 99, 0, 100, cols))
    for step in (0, 10, 20):
        run.apply(EvalLogged(step, {"step": step, **{c: -0.1 * step for c in cols if c != "step"}}))
    plot = views.balance(run, views.Axis())
    assert [ln.label for ln in plot.lines] == ["T-grad", "T-decay", "rest-grad", "rest-decay"] and not plot.note
    off = RunData()
    off.apply(RunStarted(RunConfig(), "cpu", 1, 1, 99, (1,) * 99, 0, 100, ("step", "val_acc")))
    assert views.balance(off, views.Axis()).note == "probe off: --set probe.balance=true"
