"""train.target_draws_as (engine/task/samplers.py target_draws): r re-solved on a training set so that a
target's expected draws per batch equal those of the split's own pairs (`own`) or of all its pairs (`all`):
the draws factor of a fork study apart from its pairs factor."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from engine.config import ConfigError
from engine.task.add_pairs import with_added_pairs
from engine.task.dataset import load_dataset
from engine.task.samplers import Sampler, build_sampler, target_occurrences
from tests.conftest import tiny_config

BASE = {"data__p": 31, "data__starve_k": 3, "data__starve_m": 1, "data__frac_train": 0.5, "train__batch_size": 32}


def _sampler(**over: Any) -> Sampler:
    cfg = tiny_config(**BASE, **over)
    d = load_dataset(cfg.data, cfg.train.seed, "cpu")
    if cfg.train.add_pairs:
        d = with_added_pairs(d, cfg, "cpu")
    return build_sampler(cfg, d.x_train, torch.device("cpu"))


def _occ(s: Sampler) -> float:
    return target_occurrences(s.base_weights(), s.a, s.b_other, s.target, s.p, s.rate, s.batch)


@pytest.mark.parametrize("rate", [0.3, 0.0, 1.0])
def test_each_cell_of_pairs_by_draws_gets_the_draws_it_names(rate: float) -> None:
    own_own = _sampler(train__target_rate=rate)
    all_all = _sampler(train__target_rate=rate, train__add_pairs="targets")
    own_all = _sampler(train__target_rate=rate, train__target_draws_as="all")
    all_own = _sampler(train__target_rate=rate, train__add_pairs="targets", train__target_draws_as="own")
    if rate:  # at one r, adding pairs adds draws (matched, r = 0, re-matches them: the matched cells)
        assert _occ(all_all) > 2 * _occ(own_own)
    assert _occ(own_all) == pytest.approx(_occ(all_all), rel=1e-9)
    assert _occ(all_own) == pytest.approx(_occ(own_own), rel=1e-9)
    assert own_all.n == own_own.n and all_own.n == all_all.n  # the pairs stay as the arm names them


def test_realized_draws_follow_the_expectation() -> None:
    """The draws a sampler makes over many steps, counted, are the expected ones (within 5%)."""
    s = _sampler(train__target_rate=0.3, train__target_draws_as="all")
    steps = 3000
    for _ in range(steps):
        s.next()
    realized = float(s.draws[: s.p][s.target].double().mean()) / steps
    assert realized == pytest.approx(_occ(s), rel=0.05)


def test_draws_out_of_reach_are_one_line() -> None:
    with pytest.raises(ConfigError, match="out of reach"):
        _sampler(train__target_rate=1000.0, train__target_draws_as="all")  # all pairs at r = 1000 on one pair each
