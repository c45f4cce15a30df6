"""The UI's CPU token bucket (grok_tui/cpu_budget.py) with a fake CPU clock: no timing involved."""

from __future__ import annotations

import itertools
import time

from grok_tui.cpu_budget import UI_BURST_S, CpuBudget


def test_spending_more_cpu_than_the_share_earns_defers_until_a_stale_deadline() -> None:
    budget = CpuBudget(share=0.04, max_stale_s=1e9)
    cpu = itertools.count()  # every reading one CPU second later: far over 4% of a core
    budget.cpu_clock = lambda: float(next(cpu))
    budget.within(live=True, charts_at=0.0)  # the first reading sets the mark
    assert not budget.within(live=True, charts_at=0.0)
    assert not budget.within(live=True, charts_at=0.0)


def test_nothing_training_means_no_budget() -> None:
    budget = CpuBudget(share=0.04, max_stale_s=1e9)
    cpu = itertools.count()
    budget.cpu_clock = lambda: float(next(cpu))
    budget.within(live=True, charts_at=0.0)
    assert not budget.within(live=True, charts_at=0.0)
    assert budget.within(live=False, charts_at=0.0)  # the run ended: the bucket is full again
    assert budget._allowance == UI_BURST_S


def test_a_stale_chart_redraws_whatever_the_budget() -> None:
    budget = CpuBudget(share=0.04, max_stale_s=5.0)
    cpu = itertools.count()
    budget.cpu_clock = lambda: float(next(cpu))
    budget.within(live=True, charts_at=0.0)
    drawn_long_ago, drawn_just_now = time.perf_counter() - 10.0, time.perf_counter() + 1e6
    assert not budget.within(live=True, charts_at=drawn_just_now)  # over budget
    assert budget.within(live=True, charts_at=drawn_long_ago)  # over budget, but 10 s stale


def test_an_idle_ui_keeps_its_budget() -> None:
    budget = CpuBudget(share=0.04, max_stale_s=1e9)
    budget.cpu_clock = lambda: 0.0  # no CPU spent
    assert all(budget.within(live=True, charts_at=0.0) for _ in range(5))
