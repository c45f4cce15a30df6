"""Tasks, tokens and the three split strategies of §4.2 (plus the structured held-out shapes)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from engine.config import DataConfig
from engine.task import data as D


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
    assert D.tokens(DataConfig(op="add", p=5, format="a_b_eq"), np.array([[3, 2]])).tolist() == [[3, 2, 5]]


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


def _old_skewed_split(cfg: DataConfig, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The a-only skewed split as it was first written: random test set, then weights exp(-skew·a/(p-1))."""
    pairs = D.operand_pairs(cfg)
    rng = np.random.default_rng(seed)
    n = len(pairs)
    test = np.zeros(n, dtype=bool)
    test[rng.permutation(n)[: round(cfg.frac_test * n)]] = True
    pool = np.flatnonzero(~test)
    w = np.exp(-cfg.skew * pairs[pool, 0] / (cfg.p - 1))
    train = rng.choice(pool, size=round(cfg.frac_train * n), replace=False, p=w / w.sum())
    return np.sort(train), np.flatnonzero(test)


@pytest.mark.parametrize("seed", [0, 5])
def test_default_skew_keys_keep_the_a_only_split_bit_identical(seed: int) -> None:
    """skew_on = a, skew_order = value (the defaults) is the split earlier run directories were made with."""
    cfg = DataConfig(p=31, split="skewed", skew=8.0)
    train, test = _old_skewed_split(cfg, seed)
    s = D.make_split(cfg, seed)
    assert np.array_equal(s.train, train) and np.array_equal(s.test, test)


def test_token_rank_orders() -> None:
    cfg = DataConfig(p=11, skew_order="value")
    assert D.token_rank(cfg, 3).tolist() == list(range(11))
    cfg = DataConfig(p=11, skew_order="random")
    r3, r4 = D.token_rank(cfg, 3), D.token_rank(cfg, 4)
    assert sorted(r3.tolist()) == list(range(11)) and np.array_equal(r3, D.token_rank(cfg, 3))
    assert not np.array_equal(r3, r4)


def test_skew_weights_on_both_operands_are_exact() -> None:
    """skew_on = both: w(a, b) ∝ exp(-skew·(r(a) + r(b))/(p-1)), with r the token's rank."""
    cfg = DataConfig(p=5, op="add", split="skewed", skew=2.0, skew_on="both", skew_order="random")
    pairs = D.operand_pairs(cfg)
    r = D.token_rank(cfg, 0)
    w = D.skew_weights(cfg, pairs, r)
    want = np.exp(-2.0 * (r[pairs[:, 0]] + r[pairs[:, 1]]) / 4)
    assert np.allclose(w, want / want.sum(), rtol=1e-12, atol=0)
    # a pair and its mirror weigh the same, unlike the a-only reading
    assert w[1 * 5 + 3] == pytest.approx(w[3 * 5 + 1], rel=1e-15)
    a_only = D.skew_weights(DataConfig(p=5, split="skewed", skew=2.0, skew_order="random"), pairs, r)
    assert np.allclose(a_only, np.exp(-2.0 * r[pairs[:, 0]] / 4) / np.exp(-2.0 * r[pairs[:, 0]] / 4).sum())


def test_token_level_skew_starves_high_rank_tokens_in_both_positions() -> None:
    cfg = DataConfig(p=97, split="skewed", skew=15.0, skew_on="both", skew_order="random")
    pairs = D.operand_pairs(cfg)
    s = D.make_split(cfg, 0)
    counts = np.bincount(pairs[s.train].ravel(), minlength=97)
    by_rank = counts[np.argsort(D.token_rank(cfg, 0))]  # counts in rank order
    assert len(s.train) == round(0.3 * 97**2) and not set(s.train) & set(s.test)
    assert by_rank[-10:].max() < by_rank[:10].min()
    assert by_rank[-10:].mean() < 0.05 * by_rank[:10].mean()
    a_only = D.make_split(DataConfig(p=97, split="skewed", skew=15.0), 0)
    assert np.bincount(pairs[a_only.train].ravel(), minlength=97).min() > 20  # b keeps every token common


@pytest.mark.parametrize(("k", "m"), [(3, 0), (3, 2)])
def test_starved_tokens_keep_exactly_m_training_pairs(k: int, m: int) -> None:
    cfg = DataConfig(p=11, op="add", frac_train=0.3, starve_k=k, starve_m=m)
    pairs = D.operand_pairs(cfg)
    s = D.make_split(cfg, 0)
    starved = D.starved_tokens(cfg, 0)
    assert len(starved) == k and len(set(starved.tolist())) == k
    assert np.array_equal(s.test, D.make_split(DataConfig(p=11, op="add", frac_train=0.3), 0).test)
    assert not set(s.train) & set(s.test)
    tr = pairs[s.train]
    for t in starved:
        assert int(((tr[:, 0] == t) | (tr[:, 1] == t)).sum()) == m  # pairs holding t; (t, t) counts once
    assert len(s.train) == round(0.3 * 121)
    free = np.setdiff1d(np.arange(11), starved)
    assert np.bincount(tr.ravel(), minlength=11)[free].min() > 0


def test_starve_zero_keeps_the_random_split() -> None:
    a, b = D.make_split(DataConfig(p=11, starve_m=3), 2), D.make_split(DataConfig(p=11), 2)
    assert np.array_equal(a.train, b.train) and np.array_equal(a.test, b.test)


def test_starve_m_minus_one_names_targets_on_the_plain_random_split() -> None:
    """starve_m = -1: the k target tokens are chosen as for a cap, but the split is the random one."""
    capped, free = DataConfig(p=11, starve_k=3, starve_m=1), DataConfig(p=11, starve_k=3, starve_m=-1)
    a, b = D.make_split(free, 2), D.make_split(DataConfig(p=11), 2)
    assert np.array_equal(a.train, b.train) and np.array_equal(a.test, b.test)
    assert D.starved_tokens(free, 2).tolist() == D.starved_tokens(capped, 2).tolist()


@pytest.mark.parametrize(
    ("kw", "key"),
    [
        ({"skew_on": "b"}, "data.skew_on"),
        ({"skew_order": "sorted"}, "data.skew_order"),
        ({"starve_k": -1}, "data.starve_k"),
        ({"starve_k": 12}, "data.starve_k"),
        ({"starve_m": -2}, "data.starve_m"),
        ({"starve_k": 2, "split": "skewed"}, "data.starve_k"),
    ],
)
def test_split_keys_are_validated_by_name(kw: dict[str, Any], key: str) -> None:
    with pytest.raises(ValueError, match=key):
        DataConfig(p=11, **kw)


def test_pairs_holding_counts_a_pair_once_per_token() -> None:
    pairs = np.array([[0, 1], [1, 1], [2, 0], [2, 2]])
    assert D.pairs_holding(pairs, 4).tolist() == [2, 2, 2, 0]


def test_batch_presence_is_the_hypergeometric_miss_probability() -> None:
    # n = 5 pairs, batch 2: a token in 1 pair is missed by C(4,2)/C(5,2) = 6/10 of batches
    got = D.batch_presence(5, np.array([0, 1, 2, 4, 5]), 2)
    assert got == pytest.approx([0.0, 0.4, 1 - 3 / 10, 1.0, 1.0], abs=1e-12)
    assert D.batch_presence(5, np.array([1]), 0).tolist() == [1.0]  # full batch


def test_coverage_ceiling_is_one_minus_the_share_of_blind_test_pairs() -> None:
    train = np.array([[0, 1], [1, 2], [2, 0]])  # token 3 never trained (p = 4)
    test = np.array([[3, 0], [0, 0], [1, 3], [2, 2]])
    assert D.coverage_ceiling(train, test, 4) == 0.5
    cfg = DataConfig(p=97, starve_k=10, starve_m=0)
    s, pairs = D.make_split(cfg, 0), D.operand_pairs(cfg)
    starved = D.starved_tokens(cfg, 0)
    te = pairs[s.test]
    blind = np.isin(te[:, 0], starved) | np.isin(te[:, 1], starved)
    assert D.coverage_ceiling(pairs[s.train], te, 97) == 1 - blind.mean()


def test_targets_never_share_a_training_pair_and_skip_token_0_on_mul() -> None:
    for seed in range(20):
        cfg = DataConfig(p=23, op="mul", starve_k=8, starve_m=3)
        starved = D.starved_tokens(cfg, seed)
        assert 0 not in starved.tolist() and len(set(starved.tolist())) == 8
        tr = D.operand_pairs(cfg)[D.make_split(cfg, seed).train]
        assert D.shared_target_pairs(tr, starved, 23) == 0
    add = DataConfig(p=23, op="add", starve_k=22, starve_m=1)  # add keeps 0 as a candidate
    assert 0 in D.starved_tokens(add, 0).tolist()


@pytest.mark.parametrize("mode", ["same", "mixed"])
def test_starve_position_puts_each_target_where_asked(mode: str) -> None:
    cfg = DataConfig(p=31, op="mul", starve_k=6, starve_m=2, starve_position=mode)
    for seed in range(5):
        starved = D.starved_tokens(cfg, seed)
        tr = D.operand_pairs(cfg)[D.make_split(cfg, seed).train]
        want = D.target_positions(cfg, starved, seed)
        for t in starved.tolist():
            as_a, as_b = int((tr[:, 0] == t).sum()), int((tr[:, 1] == t).sum())
            assert not ((tr[:, 0] == t) & (tr[:, 1] == t)).any()  # no (t, t): it holds t at both
            if mode == "same":
                assert (as_a, as_b) == ((2, 0) if want[t] == 0 else (0, 2))
            else:
                assert (as_a, as_b) == (1, 1)


def test_position_split_matches_a_hand_count_on_p7() -> None:
    train = np.array([[3, 1], [2, 3], [5, 5], [0, 4]])  # 3 seen as a and as b; 5 as both; 6 never
    test = np.array([[3, 2], [1, 3], [6, 1], [1, 6], [5, 2], [2, 5], [3, 6], [0, 0], [4, 4]])
    seen, unseen = D.position_seen(train, test, np.array([3, 5, 6]), 7)
    # by hand: (3,2) 3 at a: seen; (1,3) 3 at b: seen; (6,1), (1,6): 6 never seen; (5,2), (2,5): 5 seen
    # at both; (3,6): 6 unseen; (0,0), (4,4): no target
    assert seen.tolist() == [True, True, False, False, True, True, False, False, False]
    assert unseen.tolist() == [False, False, True, True, False, False, True, False, False]
    only_a = np.array([[3, 1], [3, 2]])
    seen, unseen = D.position_seen(only_a, np.array([[3, 4], [4, 3]]), np.array([3]), 7)
    assert seen.tolist() == [True, False] and unseen.tolist() == [False, True]
