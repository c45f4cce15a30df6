"""A run's training and test sets as device tensors: the one data set-up every trainer and bench uses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.config import DataConfig
from engine.task import data as D


@dataclass(frozen=True)
class Dataset:
    """The split of one run (data config and seed) on its device."""

    x_train: torch.Tensor  # (n_train, L) token sequences
    y_train: torch.Tensor  # (n_train,) labels
    x_test: torch.Tensor  # (n_test, L)
    y_test: torch.Tensor  # (n_test,)
    train_pairs: np.ndarray  # (n_train, 2) operands (a, b), for the rare-token metrics
    test_pairs: np.ndarray  # (n_test, 2)
    token_freq: tuple[int, ...]  # occurrences of each token in the training set (Fig. 8)


def load_dataset(cfg: DataConfig, seed: int, device: torch.device | str = "cpu") -> Dataset:
    """The split `data.make_split` draws for this seed, as tensors on `device`."""
    split = D.make_split(cfg, seed)
    pairs = D.operand_pairs(cfg)
    seqs, ys = D.tokens(cfg, pairs), D.labels(cfg, pairs)
    return Dataset(
        x_train=torch.as_tensor(seqs[split.train], device=device),
        y_train=torch.as_tensor(ys[split.train], device=device),
        x_test=torch.as_tensor(seqs[split.test], device=device),
        y_test=torch.as_tensor(ys[split.test], device=device),
        train_pairs=pairs[split.train],
        test_pairs=pairs[split.test],
        token_freq=tuple(int(c) for c in D.token_counts(cfg, seqs[split.train])),
    )
