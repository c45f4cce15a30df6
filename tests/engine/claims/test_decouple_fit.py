"""The factorial's draw-starved cell after the fit (engine/claims/studies/decouple_fit.py)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.claims.studies.decouple_fit import LONG, LONG_STEPS, STARVED, expected_seen, target_pairs
from engine.config.overrides import apply_overrides
from engine.config.presets import load_preset


def test_the_preset_trains_past_the_factorial_budget_and_forks_its_arms_and_a_long_pairs_contrast() -> None:
    p, f = load_preset("decouple_fit"), load_preset("decouple_factorial")
    at = int(p.sweep["fork_at"])
    assert p.config.train.max_steps == at > int(f.sweep["fork_at"])
    assert set(f.sweep["forks"]) - {"rescaled_500", "rescaled_500_nowd"} < set(p.sweep["forks"])
    forks = p.sweep["forks"]
    assert forks[STARVED]["train.max_steps"] == at + 500
    assert forks[LONG]["train.max_steps"] == forks["all_own_wd_5000"]["train.max_steps"] == at + LONG_STEPS
    long_a, long_b = ({k: v for k, v in forks[a].items() if k != "train.add_pairs"} for a in (LONG, "all_own_wd_5000"))
    assert long_a == long_b and forks["all_own_wd_5000"]["train.add_pairs"] == "targets"  # the pairs alone differ


def test_expected_distinct_pairs_seen() -> None:
    n = np.array([1, 10, 100])
    assert expected_seen(n, 0) == 0
    assert expected_seen(np.array([1]), 5) == pytest.approx(1.0)
    assert expected_seen(np.array([100]), 100) == pytest.approx(100 * (1 - 0.99**100))
    assert expected_seen(np.array([100]), 1e6) == pytest.approx(100)


def test_all_pairs_add_to_each_targets_own_pairs() -> None:
    base = load_preset("decouple_fit").config
    cfg = apply_overrides(base, {"train.target_rate": "0.01", "train.seed": "1"})
    own = target_pairs(cfg)
    every = target_pairs(apply_overrides(cfg, {"train.add_pairs": "targets"}))
    assert len(own) == base.data.starve_k and (every > own).all()
    assert (every <= 2 * base.data.p - 1).all()  # a token's pairs (t, b) and (a, t), (t, t) once


def test_the_plateau_forks_each_seed_at_its_memorization_for_the_same_windows() -> None:
    from engine.records.group_dir import fork_settings, fork_window

    p, fit = load_preset("decouple_plateau"), load_preset("decouple_fit")
    assert p.sweep["fork_at"] == "memorized" and p.config.train.keep_every > 0  # the phase's checkpoint is kept
    assert {k: fork_settings(v) for k, v in p.sweep["forks"].items()} == {
        k: {kk: vv for kk, vv in fork_settings(v).items() if kk != "train.max_steps"}
        for k, v in fit.sweep["forks"].items()
    }  # decouple_fit's arms, each a window after its own fork step in place of an absolute step
    assert fork_window(p.sweep["forks"][STARVED]) == 500 and fork_window(p.sweep["forks"][LONG]) == LONG_STEPS
