"""Tasks, tokens and the three split strategies of §4.2 (plus the structured held-out shapes)."""

from __future__ import annotations

import numpy as np
import pytest

from engine import data as D
from engine.config import DataConfig


@pytest.mark.parametrize(
    ("op", "fn"),
    [
        ("add", lambda a, b, p: (a + b) % p),
        ("sub", lambda a, b, p: (a - b) % p),
        ("mul", lambda a, b, p: (a * b) % p),
        ("div", lambda a, b, p: (a * pow(b, -1, p)) % p),
        ("poly", lambda a, b, p: (a * a + a * b + b * b) % p),
    ],
)
def test_labels(op: str, fn) -> None:
    cfg = DataConfig(op=op, p=11)
    pairs = D.operand_pairs(cfg)
    ys = D.labels(cfg, pairs)
    assert all(y == fn(int(a), int(b), 11) for (a, b), y in zip(pairs, ys, strict=True))
    assert len(pairs) == (110 if op == "div" else 121)


def test_tokens_layout() -> None:
    cfg = DataConfig(op="add", p=5)
    seq = D.tokens(cfg, np.array([[3, 2]]))
    assert seq.tolist() == [[3, 5, 2, 6]]  # the paper's example (3+2) mod 5 -> [3, 5, 2, 6]
    assert D.tokens(DataConfig(op="add", p=5, op_token=False), np.array([[3, 2]])).tolist() == [[3, 2, 6]]


@pytest.mark.parametrize("split", ["random", "uniform", "skewed"])
def test_split_sizes_disjoint_and_deterministic(split: str) -> None:
    cfg = DataConfig(p=97, split=split)
    s1, s2 = D.make_split(cfg, 3), D.make_split(cfg, 3)
    assert np.array_equal(s1.train, s2.train) and np.array_equal(s1.test, s2.test)
    assert len(s1.test) == round(0.2 * 97**2) and len(s1.train) == round(0.3 * 97**2)
    assert not set(s1.train) & set(s1.test)
    assert not np.array_equal(D.make_split(cfg, 4).train, s1.train)


def test_test_set_is_the_same_random_holdout_for_every_strategy() -> None:
    tests = [D.make_split(DataConfig(split=s), 0).test for s in ("random", "uniform", "skewed")]
    assert all(np.array_equal(tests[0], t) for t in tests)


def _operand_counts(split: str, **kw) -> tuple[np.ndarray, np.ndarray]:
    cfg = DataConfig(p=97, split=split, **kw)
    pairs = D.operand_pairs(cfg)[D.make_split(cfg, 0).train]
    return np.bincount(pairs[:, 0], minlength=97), np.bincount(pairs[:, 1], minlength=97)


def test_uniform_split_balances_a_and_b() -> None:
    ca, cb = _operand_counts("uniform")
    assert ca.max() - ca.min() <= 1 and cb.max() - cb.min() <= 1


def test_skewed_split_matches_fig8_shape() -> None:
    """Fig. 8: the skewed split makes low-index values of a common and high-index ones rare."""
    ca, _ = _operand_counts("skewed", skew=3.0)
    cr, _ = _operand_counts("random")
    assert ca[:10].mean() > 3 * ca[-10:].mean()
    assert ca.std() > 3 * cr.std()
    assert np.corrcoef(np.arange(97), ca)[0, 1] < -0.8


def test_skewed_test_split_mirrors_the_skew_into_the_test_set() -> None:
    """skewed_test: the tokens rarest in training are the commonest in the held-out set."""
    cfg = DataConfig(p=97, split="skewed_test", skew=3.0)
    pairs = D.operand_pairs(cfg)
    s = D.make_split(cfg, 0)
    assert len(s.train) == round(0.3 * len(pairs)) and len(s.test) == round(0.2 * len(pairs))
    assert not set(s.train) & set(s.test)
    train_a = np.bincount(pairs[s.train, 0], minlength=97)
    test_a = np.bincount(pairs[s.test, 0], minlength=97)
    assert np.corrcoef(np.arange(97), train_a)[0, 1] < -0.8
    assert np.corrcoef(np.arange(97), test_a)[0, 1] > 0.8
    assert test_a[-10:].mean() > 5 * test_a[:10].mean()
    skewed = D.make_split(DataConfig(p=97, split="skewed", skew=3.0), 0)
    assert np.corrcoef(np.arange(97), np.bincount(pairs[skewed.test, 0], minlength=97))[0, 1] < 0.5  # random


def test_skew_zero_is_random_like() -> None:
    ca, _ = _operand_counts("skewed", skew=0.0)
    assert abs(np.corrcoef(np.arange(97), ca)[0, 1]) < 0.4


def test_block_and_strip_hold_out_exact_sets() -> None:
    cfg = DataConfig(p=11, op="add", split="block", split_k=3)
    pairs = D.operand_pairs(cfg)
    s = D.make_split(cfg, 0)
    assert {tuple(x) for x in pairs[s.test]} == {(a, b) for a in range(3) for b in range(3)}
    cfg = DataConfig(p=11, op="add", split="strip", split_k=2)
    s = D.make_split(cfg, 0)
    assert {tuple(x) for x in pairs[s.test]} == {(a, b) for a in range(2) for b in range(11)}
    assert not set(s.train) & set(s.test)
