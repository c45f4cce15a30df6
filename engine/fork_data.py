"""A training set given more pairs mid-run: `train.add_pairs` (docs/FORK.md).

A starved split (engine/data.py `_starved_pick`) holds the test set out first, then fills the training
set from the rest with each target token capped at starve_m pairs; the target pairs it passes over are
in neither set. `train.add_pairs = TOKENS` adds every pair that holds one of those tokens and is in
neither set, so val_acc and val_acc_target stay measured on the same held-out pairs, never trained on.
"""

from __future__ import annotations

import numpy as np
import torch

from engine import data as D
from engine.config import RunConfig
from engine.dataset import Dataset


def added_pairs(cfg: RunConfig) -> np.ndarray:
    """Indices (into data.operand_pairs) of the pairs `train.add_pairs` adds: they hold a named token and
    are in neither the training set nor the test set of the run's split."""
    from engine.interventions import resolve_tokens
    from engine.metrics import split_tokens
    from engine.param_sets import parse_tokens

    tokens = resolve_tokens(parse_tokens(cfg.train.add_pairs, "train.add_pairs"), split_tokens(cfg), cfg.data.p)
    pairs = D.operand_pairs(cfg.data)
    split = D.make_split(cfg.data, cfg.train.seed)
    used = np.zeros(len(pairs), dtype=bool)
    used[split.train] = True
    used[split.test] = True
    named = np.zeros(cfg.data.p, dtype=bool)
    named[tokens] = True
    holds = named[pairs[:, 0]] | named[pairs[:, 1]]
    return np.flatnonzero(holds & ~used)


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
