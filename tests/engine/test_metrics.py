"""Rare-token accuracy (engine/task/metrics.py): rare/common split and per-token accuracy, checked by hand on p = 5."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.config import RunConfig, apply_overrides
from engine.events import EvalLogged, TokensLogged
from engine.rundir.columns import learned_step
from engine.task import data as D
from engine.task.metrics import RareTokenAccuracy, operand_counts, rare_tokens
from engine.train.trainer import Trainer


def test_operand_counts_are_pairs_holding_a_token_once() -> None:
    pairs = np.array([[0, 1], [1, 1], [2, 0]])
    assert operand_counts(pairs, 4).tolist() == [2, 2, 1, 0]  # (1, 1) counts once: one pair holds 1


def test_rare_tokens_come_from_present_tokens_and_take_every_tie() -> None:
    assert rare_tokens(np.array([5, 0, 3, 0, 9]), 2).tolist() == [0, 2]  # 1 and 3 are absent, not rare
    assert rare_tokens(np.array([5, 1, 3, 1, 9]), 1).tolist() == [1, 3]  # the tie at the cut-off: both in
    assert rare_tokens(np.array([5, 1, 3, 1, 9]), 3).tolist() == [1, 2, 3]
    assert rare_tokens(np.array([4, 2, 2, 2, 9]), 2).tolist() == [1, 2, 3]  # k = 2, three tied: three
    assert rare_tokens(np.array([2, 1]), 10).tolist() == [0, 1]
    assert rare_tokens(np.array([0, 0]), 3).tolist() == []
    # the set does not depend on token ids: relabelling the tokens relabels the set
    counts = np.array([7, 3, 3, 5, 3, 8])
    perm = np.array([4, 0, 5, 2, 1, 3])
    assert sorted(perm[rare_tokens(counts, 2)].tolist()) == rare_tokens(counts[np.argsort(perm)], 2).tolist()


def test_rare_common_absent_target_and_per_token_accuracy_are_exact() -> None:
    p = 5
    # pairs holding each token, (t, t) once: 0:3 1:4 2:3 3:1 4:0 (absent)
    train = np.array([[0, 0], [0, 1], [1, 1], [2, 2], [2, 0], [3, 1], [1, 2]])
    test = np.array([[0, 4], [3, 3], [1, 2], [2, 1], [4, 4], [0, 1], [1, 1]])
    hits = torch.tensor([True, False, True, False, True, True, True])
    m = RareTokenAccuracy(train, test, p, p + 2, 2, torch.device("cpu"), np.array([3]))
    assert m.rare.tolist() == [0, 2, 3]  # k = 2: 3 (1 pair), then 0 and 2 tie at 3 pairs: both in
    assert m.absent.tolist() == [4]
    # absent: (0,4) ok, (4,4) ok -> 2/2; rare (no absent token): (3,3) miss, (1,2) ok, (2,1) miss, (0,1) ok
    # -> 2/4; common: (1,1) ok -> 1/1; target {3}: (3,3) miss -> 0/1
    assert (m.n_rare, m.n_common, m.n_absent, m.n_target) == (4, 1, 2, 1)
    acc, per = m.reduce(hits)
    assert acc.tolist() == [2 / 4, 1 / 1, 2 / 2, 0 / 1]
    # token t over the test pairs holding it, (t, t) once
    assert per[:p].tolist() == [2 / 2, 3 / 4, 1 / 2, 0 / 1, 2 / 2]
    assert all(math.isnan(v) for v in per[p:].tolist())  # op and '=' are not operands


def test_empty_sets_are_nan() -> None:
    m = RareTokenAccuracy(np.array([[0, 1]]), np.array([[0, 1], [1, 1]]), 3, 5, 0, torch.device("cpu"))
    acc, per = m.reduce(torch.tensor([True, False]))
    assert math.isnan(acc[0].item()) and acc[1].item() == 0.5  # k = 0: no rare set
    assert math.isnan(acc[2].item())  # token 2 absent but in no test pair: val_acc_absent is empty
    assert math.isnan(acc[3].item())  # no target tokens
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
    assert operand_counts(pairs[split.train], 11)[starved].tolist() == [0, 0, 0]  # so they are the absent ones
    x = torch.as_tensor(D.tokens(cfg.data, pairs[split.test]))
    with torch.no_grad():
        hits = (tr.model(x).argmax(1) == torch.as_tensor(D.labels(cfg.data, pairs[split.test]))).numpy()
    a, b = pairs[split.test, 0], pairs[split.test, 1]
    absent = np.isin(a, starved) | np.isin(b, starved)
    assert rows[-1]["val_acc_absent"] == hits[absent].mean()
    assert rows[-1]["val_acc_target"] == hits[absent].mean()  # the starved tokens are the targets
    counts = operand_counts(pairs[split.train], 11)
    rare_set = rare_tokens(counts, 3)
    assert len(rare_set) >= 3 and counts[rare_set].min() > 0
    rare = (np.isin(a, rare_set) | np.isin(b, rare_set)) & ~absent
    assert rows[-1]["val_acc_rare"] == hits[rare].mean()
    assert rows[-1]["val_acc_common"] == hits[~rare & ~absent].mean()
    val_acc = toks[-1].val_acc
    assert val_acc is not None
    for t in range(11):
        assert val_acc[t] == hits[(a == t) | (b == t)].mean()
    assert len(val_acc) == cfg.data.vocab_size


# --- exact counts on p = 5 and 11 under every data.format (issue 22) ------------------------------


def _holding_brute(pairs: np.ndarray, t: int) -> int:
    return sum(1 for a, b in pairs.tolist() if t in (a, b))  # a pair (t, t) once


@pytest.mark.parametrize("fmt", ["a_op_b_eq", "a_b_eq", "a_b"])
@pytest.mark.parametrize("p", [5, 11])
def test_rare_absent_target_and_coverage_counts_are_exact(p: int, fmt: str) -> None:
    """A short run's rare, absent and target sets, coverage, and its val_acc_* columns, against a brute-force
    recount from the split's pairs and the model's own predictions."""
    cfg = apply_overrides(
        RunConfig(),
        {
            "data.p": p,
            "data.op": "add",
            "data.format": fmt,
            "data.starve_k": 1,
            "data.starve_m": 0,  # one token with no training pair
            "model.d_embed": 8,
            "train.batch_size": 4,
            "train.max_steps": 4,
            "train.eval_every": 2,
            "train.device": "cpu",
            "probe.rare_k": 2,
        },
    )
    tr = Trainer(cfg)
    events = list(tr)
    row = [e.row for e in events if isinstance(e, EvalLogged)][-1]
    pairs = D.operand_pairs(cfg.data)
    split = D.make_split(cfg.data, cfg.train.seed)
    train, test = pairs[split.train], pairs[split.test]
    n = {t: _holding_brute(train, t) for t in range(p)}
    absent = sorted(t for t in range(p) if n[t] == 0)
    present = sorted((n[t], t) for t in range(p) if n[t] > 0)
    cut = present[min(2, len(present)) - 1][0]
    rare = sorted(t for c, t in present if c <= cut)
    target = D.starved_tokens(cfg.data, cfg.train.seed).tolist()
    assert absent == target and len(absent) == 1
    facts = tr.metrics.summary("finished", 4, 1.0, "cpu")
    assert facts["absent_tokens"] == absent and facts["rare_tokens"] == rare and facts["rare_k"] == len(rare)
    assert facts["target_tokens"] == target and facts["target_pairs"] == [0]
    blind = [bool(set(pr) & set(absent)) for pr in test.tolist()]
    assert facts["coverage"] == 1 - sum(blind) / len(test)
    x = torch.as_tensor(D.tokens(cfg.data, test))
    with torch.no_grad():
        hits = (tr.model(x).argmax(1) == torch.as_tensor(D.labels(cfg.data, test))).numpy()

    def acc(mask: list[bool]) -> float:
        return float(hits[mask].mean()) if any(mask) else math.nan

    in_rare = [bool(set(pr) & set(rare)) and not b for pr, b in zip(test.tolist(), blind, strict=True)]
    common = [not r and not b for r, b in zip(in_rare, blind, strict=True)]

    def same(got: float, want: float) -> bool:
        return (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1e-12)

    assert same(row["val_acc_rare"], acc(in_rare))
    assert same(row["val_acc_common"], acc(common))
    assert same(row["val_acc_absent"], acc(blind))
    assert same(row["val_acc_target"], acc(blind))
    assert sum(in_rare) + sum(common) + sum(blind) == len(test)
    # every format draws the same split, so the counts do not depend on it
    assert facts["draw_share"] and sum(facts["draw_share"]) == pytest.approx(1.0, abs=1e-5)
    assert all(facts["draw_share"][t] == 0 for t in absent)


def test_learned_step_is_the_start_of_the_last_run_at_or_above_the_threshold() -> None:
    steps = [0, 10, 20, 30, 40]
    assert learned_step(steps, [0.1, 0.95, 0.5, 0.92, 0.99]) == 30
    assert learned_step(steps, [0.1, 0.95, 0.96, 0.97, 0.5]) is None  # fell back at the end
    assert learned_step(steps, [0.9, 0.9, 0.9, 0.9, 0.9]) == 0
    assert learned_step(steps, [math.nan] * 5) is None  # no test pair: never learned


def test_run_metrics_track_learned_steps_as_learned_step_does() -> None:
    cfg = apply_overrides(
        RunConfig(),
        {
            "data.p": 11,
            "model.d_embed": 8,
            "train.batch_size": 16,
            "train.max_steps": 60,
            "train.eval_every": 10,
            "train.device": "cpu",
            "optim.lr": 0.01,
        },
    )
    tr = Trainer(cfg)
    toks = [e for e in tr if isinstance(e, TokensLogged)]
    steps = [e.step for e in toks]
    accs = [e.val_acc for e in toks]
    assert all(acc is not None for acc in accs)
    want = [learned_step(steps, [acc[t] for acc in accs if acc is not None]) for t in range(11)]
    assert any(v is not None for v in want) and tr.metrics.summary("finished", 60, 1.0, "cpu")["learned_step"] == want
    again = Trainer(cfg)
    again.metrics.load_state_dict(tr.metrics.state_dict())  # a checkpoint keeps the tracking
    assert again.metrics.learned_from == tr.metrics.learned_from
