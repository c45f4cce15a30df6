"""Rare-token accuracy (Fig. 4): how well the test pairs of rarely-updated tokens are predicted.

§4.2's mechanism is that a token seen in few training pairs gets few embedding updates and stays
undertrained. These metrics split validation accuracy along that line: `val_acc_rare` over the test
pairs that contain one of the `probe.rare_k` operand tokens with the fewest training occurrences
(counted over both operand positions), `val_acc_common` over all other test pairs, and a per-token
`val_acc` over the test pairs that contain the token. Masks are built once per run; each evaluation
only reduces the per-example correctness it already computes.
"""

from __future__ import annotations

import numpy as np
import torch


def operand_counts(pairs: np.ndarray, p: int) -> np.ndarray:
    """Occurrences of each operand token 0..p-1 over both positions of (N, 2) pairs; (t, t) counts 2."""
    return np.bincount(pairs.ravel(), minlength=p)[:p]


def rare_tokens(train_counts: np.ndarray, k: int) -> np.ndarray:
    """The k operand tokens with the fewest training occurrences (ties to the smaller token), sorted."""
    order = np.argsort(train_counts, kind="stable")
    return np.sort(order[: min(k, len(train_counts))])


class RareTokenAccuracy:
    """Reduces a test set's per-example correctness to rare/common and per-token accuracies."""

    def __init__(
        self, train_pairs: np.ndarray, test_pairs: np.ndarray, p: int, vocab: int, k: int, device: torch.device
    ) -> None:
        self.p = p
        self.vocab = vocab  # per-token arrays cover the vocabulary; op and '=' stay NaN
        self.rare = rare_tokens(operand_counts(train_pairs, p), k)
        is_rare = np.zeros(p, dtype=bool)
        is_rare[self.rare] = True
        rare_mask = is_rare[test_pairs[:, 0]] | is_rare[test_pairs[:, 1]]
        self.rare_mask = torch.as_tensor(rare_mask, device=device)
        self.n_rare = int(rare_mask.sum())
        self.n_common = len(test_pairs) - self.n_rare
        a, b = test_pairs[:, 0], test_pairs[:, 1]
        self.a = torch.as_tensor(a, device=device)
        # b's credit goes to b only where b ≠ a, so a pair (t, t) counts once for t
        b_other = np.where(a != b, b, vocab)  # slot `vocab` collects nothing that is read
        self.b_other = torch.as_tensor(b_other, device=device)
        n_with = np.bincount(a, minlength=vocab + 1) + np.bincount(b_other, minlength=vocab + 1)
        self.n_with = torch.as_tensor(n_with[:vocab].astype(np.float64), device=device)  # test pairs holding t

    def reduce(self, hits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """From per-example correctness (N_test,) bool: [val_acc_rare, val_acc_common] and the
        per-token accuracy (vocab,), all float64 on the device (NaN where a set is empty)."""
        h = hits.double()
        nan = torch.tensor(float("nan"), dtype=torch.float64, device=h.device)
        rare = h[self.rare_mask].sum() / self.n_rare if self.n_rare else nan
        common = h[~self.rare_mask].sum() / self.n_common if self.n_common else nan
        per = torch.bincount(self.a, weights=h, minlength=self.vocab + 1) + torch.bincount(
            self.b_other, weights=h, minlength=self.vocab + 1
        )
        per_token = torch.where(self.n_with > 0, per[: self.vocab] / self.n_with.clamp(min=1), nan)
        return torch.stack([rare, common]), per_token
