"""The decoupling table's learned step (engine/sweep/report/targets.py), against hand counts."""

from __future__ import annotations

import math

from engine.summary import RunSummary
from engine.sweep.report.targets import learned_cell, member_target_learned


def test_median_target_with_unlearned_targets() -> None:
    steps: list[int | None] = [None] * 7
    steps[1], steps[3], steps[5] = 400, 900, None
    s = RunSummary.of({"target_tokens": [1, 3, 5], "learned_step": steps})
    assert member_target_learned(s) == (900.0, 2, 3)  # median of 400, 900, inf
    steps[3] = None
    assert member_target_learned(RunSummary.of({"target_tokens": [1, 3, 5], "learned_step": steps})) == (math.inf, 1, 3)
    assert member_target_learned(RunSummary.of({"learned_step": steps})) is None  # no targets


def test_a_cell_with_a_censored_member_is_a_bound() -> None:
    # members' medians 900, unlearned (counted at the budget 10,000), 500: mean 3,800, range 500-10,000
    cell = learned_cell([(900.0, 2, 3), (math.inf, 1, 3), (500.0, 3, 3)], 10_000)
    assert cell == "≥3800 (500–10000) n=3; 6/9 targets learned"
    assert learned_cell([(900.0, 3, 3), (500.0, 3, 3)], 10_000) == "700 (500–900) n=2; 6/6 targets learned"
    assert learned_cell([], 10_000) == "-"
