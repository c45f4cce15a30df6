"""Modular-arithmetic tasks and the train/test split strategies of §4.2 and Fig. 8.

Everything here is numpy and deterministic given the seed; the trainer moves the result to the
device once.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import lgamma, sqrt

import numpy as np

from engine.config import DataConfig


def operand_pairs(cfg: DataConfig) -> np.ndarray:
    """All (a, b) pairs of the task, shape (N, 2). Division leaves out b = 0, so N = p(p-1)."""
    a, b = np.meshgrid(np.arange(cfg.p), np.arange(cfg.p), indexing="ij")
    pairs = np.stack([a.ravel(), b.ravel()], axis=1)
    if cfg.op == "div":
        pairs = pairs[pairs[:, 1] != 0]
    return pairs.astype(np.int64)


def labels(cfg: DataConfig, pairs: np.ndarray) -> np.ndarray:
    """(a op b) mod p for each pair; a ÷ b is a · b^(p-2) mod p (Fermat's little theorem)."""
    a, b, p = pairs[:, 0], pairs[:, 1], cfg.p
    if cfg.op == "add":
        v = a + b
    elif cfg.op == "sub":
        v = a - b
    elif cfg.op == "mul":
        v = a * b
    elif cfg.op == "div":
        v = a * np.array([pow(int(x), p - 2, p) for x in b], dtype=np.int64)
    elif cfg.op == "poly":
        v = a * a + a * b + b * b
    else:
        raise ValueError(f"data.op: unknown op {cfg.op!r}")
    out: np.ndarray = v % p
    return out


OPERAND_COLUMNS = {"a_op_b_eq": (0, 2), "a_b_eq": (0, 1), "a_b": (0, 1)}  # where a and b sit, by data.format


def operand_columns(cfg: DataConfig) -> tuple[int, int]:
    """The positions of a and b in a token sequence of `data.format` (see `tokens`)."""
    return OPERAND_COLUMNS[cfg.format]


def tokens(cfg: DataConfig, pairs: np.ndarray) -> np.ndarray:
    """Token sequences by `data.format`: [a, op, b, =] with op = p and '=' = p+1 (§3.3); [a, b, =]
    with '=' = p (no unused op row in the vocabulary); [a, b]."""
    n = len(pairs)
    a, b = pairs[:, 0], pairs[:, 1]
    if cfg.format == "a_op_b_eq":
        cols = [a, np.full(n, cfg.p, dtype=np.int64), b, np.full(n, cfg.p + 1, dtype=np.int64)]
    elif cfg.format == "a_b_eq":
        cols = [a, b, np.full(n, cfg.p, dtype=np.int64)]
    else:
        cols = [a, b]
    return np.stack(cols, axis=1)


@dataclass(frozen=True)
class Split:
    """Indices into the full table of pairs."""

    train: np.ndarray
    test: np.ndarray


def default_k(cfg: DataConfig) -> int:
    """Block/strip size holding out about frac_test of the pairs."""
    if cfg.split_k:
        return cfg.split_k
    if cfg.split == "block":
        return max(1, round(cfg.p * sqrt(cfg.frac_test)))
    return max(1, round(cfg.p * cfg.frac_test))


def token_rank(cfg: DataConfig, seed: int) -> np.ndarray:
    """r(t) for t in 0..p-1: the token's place in the skew order. `value` is r(t) = t; `random` is a
    permutation seeded by the run's seed, so that with skew_on = both the rare tokens are spread over
    the residues and every label keeps its share of training pairs (on add, the value order would
    leave almost no training pair that wraps around mod p)."""
    if cfg.skew_order == "random":
        return np.random.default_rng([seed, 1]).permutation(cfg.p).astype(np.int64)
    return np.arange(cfg.p, dtype=np.int64)


def skew_weights(cfg: DataConfig, pairs: np.ndarray, rank: np.ndarray, sign: float = -1.0) -> np.ndarray:
    """exp(sign · skew · x/(p-1)), normalised to sum 1, with x = r(a) (skew_on = a) or r(a) + r(b)
    (skew_on = both). Sign -1 favours low ranks (the skewed training set, Fig. 8), +1 high ranks (the
    skewed_test held-out set)."""
    x = rank[pairs[:, 0]] + (rank[pairs[:, 1]] if cfg.skew_on == "both" else 0)
    w = np.exp(sign * cfg.skew * x / (cfg.p - 1))
    out: np.ndarray = w / w.sum()
    return out


def starved_tokens(cfg: DataConfig, seed: int) -> np.ndarray:
    """The starve_k target tokens, chosen by the seed: they keep at most starve_m training pairs each
    (starve_m = -1: no cap, a plain random split), and train.target_rate weights their pairs' draws.
    On mul and div token 0 is never a target: its products are all 0 (and it has no inverse), so it is not
    a token whose place in the circuit the decoupling can ask about; a draw of 0 is replaced by the next."""
    if cfg.starve_k == 0:
        return np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng([seed, 2])
    chosen = rng.choice(cfg.p, size=cfg.starve_k, replace=False)
    if cfg.op in ("mul", "div") and 0 in chosen:
        rest = np.setdiff1d(np.arange(1, cfg.p), chosen)
        chosen[chosen == 0] = rng.choice(rest)
    return np.sort(chosen)


def target_positions(cfg: DataConfig, starved: np.ndarray, seed: int) -> dict[int, int]:
    """data.starve_position = same: the operand position (0 = a, 1 = b) each target keeps, by the seed
    (a stream of its own, so the split's draws do not move)."""
    pos = np.random.default_rng([seed, 3]).integers(0, 2, size=len(starved))
    return {int(t): int(q) for t, q in zip(starved, pos, strict=True)}


def shared_target_pairs(pairs: np.ndarray, starved: np.ndarray, p: int) -> int:
    """How many of these (a, b) pairs hold two different targets (their accuracy is credited to both)."""
    mark = np.isin(np.arange(p), starved)
    return int((mark[pairs[:, 0]] & mark[pairs[:, 1]] & (pairs[:, 0] != pairs[:, 1])).sum())


def position_seen(
    train_pairs: np.ndarray, test_pairs: np.ndarray, targets: np.ndarray, p: int
) -> tuple[np.ndarray, np.ndarray]:
    """The test pairs holding a target, split by operand position: (seen, unseen) bool masks over test_pairs.

    A target t at position q (0 = a, 1 = b) of a test pair is at a seen position when some training pair
    holds t at q ((t, t) holds it at both). A pair is `seen` when every target it holds sits at a seen
    position, `unseen` when one does not; pairs without a target are in neither."""
    seen = np.zeros((p, 2), dtype=bool)
    seen[train_pairs[:, 0], 0] = True
    seen[train_pairs[:, 1], 1] = True
    is_t = np.isin(np.arange(p), targets)
    a, b = test_pairs[:, 0], test_pairs[:, 1]
    holds = is_t[a] | is_t[b]
    blind = (is_t[a] & ~seen[a, 0]) | (is_t[b] & ~seen[b, 1])
    return holds & ~blind, holds & blind


def _starved_pick(
    cfg: DataConfig,
    pairs: np.ndarray,
    pool: np.ndarray,
    n: int,
    starved: np.ndarray,
    rng: np.random.Generator,
    seed: int,
) -> np.ndarray:
    """Random pick of n pairs from the pool in which each starved token is in at most starve_m pairs.

    Pairs that hold a starved token are visited in random order and kept while the starved token they hold
    is under its quota; the rest is drawn at random from the pairs without a starved token. A pair that
    holds two different targets is never kept (each target's m pairs are its own), and with
    data.starve_position = same or mixed a pair (t, t) is never kept either (it holds t in both positions):
    the quota then counts per position (same: all m in the target's position; mixed: ⌈m/2⌉ as a, ⌊m/2⌋ as b).
    """
    is_starved = np.isin(np.arange(cfg.p), starved)
    touches = is_starved[pairs[pool, 0]] | is_starved[pairs[pool, 1]]
    m, mode = cfg.starve_m, cfg.starve_position
    quota = np.zeros((cfg.p, 2), dtype=np.int64)  # (token, position) -> pairs it may still keep
    if mode == "any":
        quota[:, 0] = m  # any position: one counter per token (position 0)
    elif mode == "same":
        for t, q in target_positions(cfg, starved, seed).items():
            quota[t, q] = m
    else:
        quota[:, 0], quota[:, 1] = (m + 1) // 2, m // 2
    kept: list[int] = []
    for i in rng.permutation(pool[touches]):
        a, b = int(pairs[i, 0]), int(pairs[i, 1])
        toks = {t for t in (a, b) if is_starved[t]}
        if len(kept) >= n or len(toks) > 1:
            continue
        (t,) = toks
        if a == b and mode != "any":
            continue
        q = 0 if mode == "any" or a == t else 1
        if quota[t, q] > 0:
            kept.append(i)
            quota[t, q] -= 1
    rest = rng.permutation(pool[~touches])[: n - len(kept)]
    return np.sort(np.concatenate([np.array(kept, dtype=np.int64), rest]))


def held_out_mask(cfg: DataConfig, pairs: np.ndarray, rng: np.random.Generator, rank: np.ndarray) -> np.ndarray:
    """The test set: random (default), a k×k block {a < k, b < k}, a strip {a < k}, or for
    `skewed_test` drawn with weight exp(+skew·a/(p-1)), the mirror of the skewed training set."""
    n = len(pairs)
    if cfg.split == "block":
        k = default_k(cfg)
        return (pairs[:, 0] < k) & (pairs[:, 1] < k)
    if cfg.split == "strip":
        return pairs[:, 0] < default_k(cfg)
    mask = np.zeros(n, dtype=bool)
    if cfg.split == "skewed_test":
        # The other reading of §4.2's skewed sampling: the bias splits each a's pairs between the
        # sets, so the tokens the training set sees least are the ones the test set holds most.
        mask[rng.choice(n, size=round(cfg.frac_test * n), replace=False, p=skew_weights(cfg, pairs, rank, +1))] = True
        return mask
    mask[rng.permutation(n)[: round(cfg.frac_test * n)]] = True
    return mask


def _uniform_pick(pairs: np.ndarray, pool: np.ndarray, n: int, p: int, rng: np.random.Generator) -> np.ndarray:
    """Balanced pick: each value of a, and of b, appears ⌊n/p⌋ or ⌈n/p⌉ times where the pool allows.

    Round-robin over a (least-used first), each time taking the available b that is least used;
    random jitter breaks ties so the pick depends on the seed.
    """
    avail = np.zeros((p, p), dtype=bool)
    index = -np.ones((p, p), dtype=np.int64)
    avail[pairs[pool, 0], pairs[pool, 1]] = True
    index[pairs[pool, 0], pairs[pool, 1]] = pool
    count_a = np.zeros(p)
    count_b = np.zeros(p)
    chosen = []
    for _ in range(n):
        open_a = avail.any(axis=1)
        a = int(np.argmin(np.where(open_a, count_a + rng.random(p) * 0.5, np.inf)))
        b = int(np.argmin(np.where(avail[a], count_b + rng.random(p) * 0.5, np.inf)))
        avail[a, b] = False
        count_a[a] += 1
        count_b[b] += 1
        chosen.append(index[a, b])
    return np.sort(np.array(chosen, dtype=np.int64))


def make_split(cfg: DataConfig, seed: int) -> Split:
    """Hold out the test set first, then draw frac_train of all pairs from the rest (§5.1)."""
    pairs = operand_pairs(cfg)
    rng = np.random.default_rng(seed)
    rank = token_rank(cfg, seed)
    test_mask = held_out_mask(cfg, pairs, rng, rank)
    pool = np.flatnonzero(~test_mask)
    n_train = min(len(pool), round(cfg.frac_train * len(pairs)))
    if cfg.split == "uniform":
        train = _uniform_pick(pairs, pool, n_train, cfg.p, rng)
    elif cfg.split in ("skewed", "skewed_test"):
        # P(pair) ∝ exp(-skew · r(a)/(p-1)) (or r(a) + r(b)): the token of rank 0 is the most frequent,
        # rank p-1 is e^skew times rarer in expectation (before the per-value supply of the pool caps it).
        train = np.sort(rng.choice(pool, size=n_train, replace=False, p=skew_weights(cfg, pairs[pool], rank)))
    elif cfg.starve_k and cfg.starve_m >= 0:
        train = _starved_pick(cfg, pairs, pool, n_train, starved_tokens(cfg, seed), rng, seed)
    else:  # random, and the random remainder of a block/strip split
        train = np.sort(rng.permutation(pool)[:n_train])
    return Split(train=train, test=np.flatnonzero(test_mask))


def token_counts(cfg: DataConfig, seqs: np.ndarray) -> np.ndarray:
    """Occurrences of every vocabulary token in a set of sequences, shape (p+2,)."""
    return np.bincount(seqs.ravel(), minlength=cfg.vocab_size)


def pairs_holding(pairs: np.ndarray, p: int) -> np.ndarray:
    """For each operand token 0..p-1, the number of (a, b) pairs that hold it; (t, t) counts once.

    This is the one counting rule of the lab: the rare set, coverage, the starve quota, the samplers'
    draw counts and the per-token val_acc all count a pair (t, t) once for t."""
    a, b = pairs[:, 0], pairs[:, 1]
    return np.bincount(a, minlength=p)[:p] + np.bincount(b[b != a], minlength=p)[:p]


def batch_presence(n: int, holding: np.ndarray, batch: int) -> np.ndarray:
    """P(a batch of `batch` pairs drawn without replacement from n holds the token), for a token held by
    `holding` of the n pairs: 1 - C(n - n_t, B) / C(n, B). A shuffled epoch's batches are such draws."""
    b = min(batch, n) if batch else n
    out = np.empty(len(holding))
    for i, n_t in enumerate(holding.tolist()):
        if n - n_t < b:
            out[i] = 1.0
        else:  # log C(n - n_t, b) - log C(n, b)
            lg = lgamma(n - n_t + 1) - lgamma(n - n_t - b + 1) - lgamma(n + 1) + lgamma(n - b + 1)
            out[i] = 1.0 - float(np.exp(lg))
    return out


def coverage_ceiling(train_pairs: np.ndarray, test_pairs: np.ndarray, p: int) -> float:
    """1 - the share of test pairs that hold an operand token absent from the training set: the best
    val_acc a model can reach if it cannot place a token it never saw."""
    absent = pairs_holding(train_pairs, p) == 0
    blind = absent[test_pairs[:, 0]] | absent[test_pairs[:, 1]]
    return 1.0 - float(blind.mean()) if len(test_pairs) else float("nan")
