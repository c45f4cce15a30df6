"""Rare-token accuracy (engine/metrics.py): rare/common split and per-token accuracy, checked by hand on p = 5."""

from __future__ import annotations

import math

import numpy as np
import torch

from engine import data as D
from engine.config import RunConfig, apply_overrides
from engine.events import EvalLogged, TokensLogged
from engine.metrics import RareTokenAccuracy, operand_counts, rare_tokens
from engine.trainer import Trainer


def test_operand_counts_cover_both_positions() -> None:
    pairs = np.array([[0, 1], [1, 1], [2, 0]])
    assert operand_counts(pairs, 4).tolist() == [2, 3, 1, 0]  # (1, 1) counts twice: two occurrences


def test_rare_tokens_are_the_least_trained_with_ties_to_the_smaller_token() -> None:
    assert rare_tokens(np.array([5, 0, 3, 0, 9]), 2).tolist() == [1, 3]
    assert rare_tokens(np.array([5, 1, 3, 1, 9]), 3).tolist() == [1, 2, 3]
    assert rare_tokens(np.array([2, 1]), 10).tolist() == [0, 1]


def test_rare_common_and_per_token_accuracy_are_exact() -> None:
    p = 5
    train = np.array([[0, 0], [0, 1], [1, 1], [2, 2], [2, 0], [3, 1], [1, 2]])  # counts 0:4 1:5 2:4 3:1 4:0
    test = np.array([[0, 4], [3, 3], [1, 2], [2, 1], [4, 4], [0, 1]])
    hits = torch.tensor([True, False, True, False, True, True])
    m = RareTokenAccuracy(train, test, p, p + 2, 2, torch.device("cpu"))
    assert m.rare.tolist() == [3, 4]
    rc, per = m.reduce(hits)
    # rare pairs: (0,4) ok, (3,3) miss, (4,4) ok -> 2/3; common: (1,2) ok, (2,1) miss, (0,1) ok -> 2/3
    assert rc.tolist() == [2 / 3, 2 / 3]
    hits2 = torch.tensor([False, False, True, True, True, False])
    rc2, per2 = m.reduce(hits2)
    assert rc2.tolist() == [1 / 3, 2 / 3]
    want = [0 / 2, 2 / 3, 2 / 2, 0 / 1, 1 / 2]  # token t: pairs holding t, (t, t) once
    assert per2[:p].tolist() == want
    assert all(math.isnan(v) for v in per2[p:].tolist())  # op and '=' are not operands
    assert per[:p].tolist() == [2 / 2, 2 / 3, 1 / 2, 0 / 1, 2 / 2]


def test_empty_rare_set_is_nan() -> None:
    m = RareTokenAccuracy(np.array([[0, 1]]), np.array([[0, 1], [1, 1]]), 3, 5, 0, torch.device("cpu"))
    rc, per = m.reduce(torch.tensor([True, False]))
    assert math.isnan(rc[0].item()) and rc[1].item() == 0.5
    assert math.isnan(per[2].item())  # token 2 holds no test pair


def test_trainer_logs_rare_columns_and_per_token_val_acc() -> None:
    cfg = apply_overrides(
        RunConfig(),
        {
            "data.p": 11,
            "train.max_steps": 20,
            "train.eval_every": 10,
            "train.batch_size": 16,
            "train.device": "cpu",
            "probe.rare_k": 3,
            "data.starve_k": 3,
            "data.starve_m": 0,
        },
    )
    tr = Trainer(cfg)
    evals = list(tr)
    rows = [e.row for e in evals if isinstance(e, EvalLogged)]
    toks = [e for e in evals if isinstance(e, TokensLogged)]
    assert [r["step"] for r in rows] == [0, 10, 20] and len(toks) == 3
    split = D.make_split(cfg.data, cfg.train.seed)
    pairs = D.operand_pairs(cfg.data)
    starved = D.starved_tokens(cfg.data, cfg.train.seed)
    assert operand_counts(pairs[split.train], 11)[starved].tolist() == [0, 0, 0]  # so they are the 3 rare ones
    x = torch.as_tensor(D.tokens(cfg.data, pairs[split.test]))
    with torch.no_grad():
        hits = (tr.model(x).argmax(1) == torch.as_tensor(D.labels(cfg.data, pairs[split.test]))).numpy()
    a, b = pairs[split.test, 0], pairs[split.test, 1]
    rare = np.isin(a, starved) | np.isin(b, starved)
    assert rows[-1]["val_acc_rare"] == hits[rare].mean()
    assert rows[-1]["val_acc_common"] == hits[~rare].mean()
    for t in range(11):
        assert toks[-1].val_acc[t] == hits[(a == t) | (b == t)].mean()
    assert len(toks[-1].val_acc) == cfg.data.vocab_size
