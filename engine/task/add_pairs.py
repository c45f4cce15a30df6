"""A training set given more pairs mid-run: `train.add_pairs` (docs/FORK.md).

A starved split (engine/task/data.py `_starved_pick`) holds the test set out first, then fills the training
set from the rest with each target token capped at starve_m pairs; the target pairs it passes over are
in neither set. `train.add_pairs = TOKENS` adds every pair that holds one of those tokens and is in
neither set, so val_acc and val_acc_target stay measured on the same held-out pairs, never trained on.
`train.add_pairs_m` caps what is added: each named token gets pairs, drawn at random (a stream of the
seed's own), until it holds m training pairs; 0 takes m as the median count of the tokens not named,
what a typical token of the split holds.
"""

from __future__ import annotations

import numpy as np
import torch

from engine.config import RunConfig
from engine.task import data as D
from engine.task.dataset import Dataset


def added_pairs(cfg: RunConfig) -> np.ndarray:
    """Indices (into data.operand_pairs) of the pairs `train.add_pairs` adds: they hold a named token and
    are in neither the training set nor the test set of the run's split."""
    from engine.config.param_sets import parse_tokens
    from engine.task.metrics import resolve_tokens, split_tokens

    tokens = resolve_tokens(parse_tokens(cfg.train.add_pairs, "train.add_pairs"), split_tokens(cfg), cfg.data.p)
    pairs = D.operand_pairs(cfg.data)
    split = D.make_split(cfg.data, cfg.train.seed)
    used = np.isin(np.arange(len(pairs)), np.concatenate([split.train, split.test]))
    named = np.isin(np.arange(cfg.data.p), tokens)
    holds = named[pairs[:, 0]] | named[pairs[:, 1]]
    spare = np.flatnonzero(holds & ~used)
    m = cfg.train.add_pairs_m
    if m < 0:
        return spare
    have = D.pairs_holding(pairs[split.train], cfg.data.p)
    if m == 0:  # the median operand token's count among the tokens not named: a typical token's share
        others = np.setdiff1d(np.arange(cfg.data.p), tokens)
        m = int(np.median(have[others])) if len(others) else 0
    kept: list[int] = []
    for i in np.random.default_rng([cfg.train.seed, 4]).permutation(spare):  # a stream of its own
        toks = {int(t) for t in pairs[i] if named[t]}  # a pair (t, t) counts once for t
        if any(have[t] < m for t in toks):
            kept.append(int(i))
            for t in toks:
                have[t] += 1
    return np.sort(np.array(kept, dtype=np.int64))


def with_added_pairs(d: Dataset, cfg: RunConfig, device: torch.device | str) -> Dataset:
    """The run's dataset with `train.add_pairs`'s pairs in its training set (in table order, as a split's)."""
    split = D.make_split(cfg.data, cfg.train.seed)
    train = np.sort(np.concatenate([split.train, added_pairs(cfg)]))
    pairs = D.operand_pairs(cfg.data)
    seqs, ys = D.tokens(cfg.data, pairs), D.labels(cfg.data, pairs)
    return Dataset(
        x_train=torch.as_tensor(seqs[train], device=device),
        y_train=torch.as_tensor(ys[train], device=device),
        x_test=d.x_test,
        y_test=d.y_test,
        train_pairs=pairs[train],
        test_pairs=d.test_pairs,
        token_freq=tuple(int(c) for c in D.token_counts(cfg.data, seqs[train])),
    )
