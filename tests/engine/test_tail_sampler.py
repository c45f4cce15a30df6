"""The frequency tail (train.sampler = tail, engine/task/samplers.py): pair (a, b) drawn with weight
w(a)·w(b), w(t) = rank(t)^(-s), so that with the data intact a token's share of draws follows rank^(-s)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from engine.task import data as D
from engine.task.samplers import TailSampler, build_sampler, tail_deciles, tail_weights
from tests.conftest import tiny_config
from tests.engine.test_samplers import _train

DRAWS = 1000  # batches of 512: about a million token draws


def _cfg(s: float, seed: int = 0):
    return tiny_config(
        data__p=97,
        data__skew_order="random",
        train__sampler="tail",
        train__tail_s=s,
        train__batch_size=512,
        train__seed=seed,
    )


def _all_pairs(cfg) -> torch.Tensor:
    """Every pair (a, b) as a training set: the data intact."""
    return torch.as_tensor(D.tokens(cfg.data, D.operand_pairs(cfg.data)))


@pytest.mark.parametrize("s", [1.0, 2.0])
def test_with_the_data_intact_a_tokens_share_of_draws_follows_its_rank_to_the_minus_s(s: float) -> None:
    cfg = _cfg(s)
    sampler = build_sampler(cfg, _all_pairs(cfg), torch.device("cpu"))
    assert isinstance(sampler, TailSampler)
    for _ in range(DRAWS):
        sampler.next()
    share = np.array(sampler.draw_share())
    w = tail_weights(cfg).numpy()
    # Token t's draws: w(t)·S as a, w(t)·(S - w(t)) as b ≠ a (a pair (t, t) counts once), S = Σ w.
    law = w * (2 * w.sum() - w)
    law /= law.sum()
    sd = np.sqrt(law / float(sampler.draws.sum()))  # a token's count is about Poisson
    assert np.all(np.abs(share - law) < 5 * sd)
    # rank^(-s) itself: the (t, t) pair bends only the head, by w(t)/(2S): 10% at rank 1 for s = 1
    rank = D.token_rank(cfg.data, cfg.train.seed) + 1
    zipf = rank ** (-s) / (rank ** (-s)).sum()
    if s == 1.0:
        assert np.all(np.abs(share / zipf - 1) < 0.15)
    slope = np.polyfit(np.log(rank[rank > 1]), np.log(share[rank > 1]), 1)[0]
    assert abs(slope + s) < 0.05, slope


def test_a_split_draws_by_the_same_weights() -> None:
    cfg = _cfg(1.0)
    sampler = build_sampler(cfg, _train(cfg), torch.device("cpu"))
    a, b = sampler.a, sampler.b
    assert torch.equal(sampler.draw_weights(), tail_weights(cfg)[a] * tail_weights(cfg)[b])


def test_the_ranks_are_a_permutation_seeded_by_the_run() -> None:
    w0, w1 = tail_weights(_cfg(1.0, seed=0)), tail_weights(_cfg(1.0, seed=1))
    assert sorted(w0.tolist()) == sorted(w1.tolist()) and not torch.equal(w0, w1)
    assert torch.equal(w0, tail_weights(_cfg(1.0, seed=0)))


def test_deciles_split_the_tokens_by_rank_most_drawn_first() -> None:
    cfg = _cfg(1.0)
    parts = tail_deciles(cfg)
    assert len(parts) == 10 and sorted(t for p in parts for t in p) == list(range(97))
    rank = D.token_rank(cfg.data, cfg.train.seed)
    assert all(max(rank[a]) < min(rank[b]) for a, b in itertools.pairwise(parts))
    assert {len(p) for p in parts} == {9, 10}


def test_a_tail_run_logs_each_deciles_val_acc_and_draw_share(tmp_path) -> None:
    """summary.json holds the outcome by decile (a kept group's pack drops tokens.csv, so a page reads it there)."""
    import csv
    import json

    from engine.train.run import Run

    cfg = tiny_config(data__skew_order="random", train__sampler="tail", train__tail_s=1.0)
    run = Run(cfg, tmp_path)
    for _ in run.events():
        pass
    doc = json.loads((run.dir / "summary.json").read_text())
    share, acc = doc["decile_draw_share"], doc["decile_val_acc"]
    assert len(share) == len(acc) == 10
    assert abs(sum(share) - 1) < 1e-5 and share[0] > share[-1]  # the head is drawn most
    with open(run.dir / "tokens.csv") as fh:
        rows = list(csv.DictReader(fh))
    last = max(int(r["step"]) for r in rows)
    per_token = {int(r["token"]): float(r["val_acc"]) for r in rows if int(r["step"]) == last and r["val_acc"]}
    want = [float(np.nanmean([per_token[t] for t in part if t in per_token])) for part in tail_deciles(cfg)]
    assert np.allclose(acc, want, atol=1e-6)  # the last evaluation's per-token val_acc, by decile
    from engine.rundir import read_summary

    summary = read_summary(run.dir)  # known fields, checked as read; not unchecked extras
    assert summary.decile_val_acc == acc and summary.decile_draw_share == share and not summary.extra
