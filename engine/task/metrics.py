"""Rare-token accuracy (Fig. 4): how well the test pairs of rarely-updated tokens are predicted.

§4.2's mechanism is that a token seen in few training pairs gets few embedding updates and stays
undertrained. These metrics split validation accuracy along that line. Every count is of pairs holding
a token, a pair (t, t) once (engine/task/data.py pairs_holding):

- `val_acc_rare`: the test pairs holding a rare token, one of the `probe.rare_k` least-trained tokens
  among those with at least one training pair. Every token tied with the k-th is in too, so the set
  does not depend on token ids and may hold more than k tokens (summary.json logs them).
- `val_acc_absent`: the test pairs holding a token with no training pair, which no optimizer or sampler
  can place (NaN when every token is trained); these pairs are in neither rare nor common.
- `val_acc_common`: all other test pairs.
- `val_acc_target`: the test pairs holding one of data.starve_k's target tokens (NaN without them), the
  decoupling experiment's measure.
- a per-token `val_acc` over the test pairs that hold the token.

Masks are built once per run; each evaluation only reduces the per-example correctness it already
computes.
"""

from __future__ import annotations

import numpy as np
import torch

from engine.config import ConfigError, RunConfig
from engine.config.param_sets import TokenSpec
from engine.events import TokenSets
from engine.task import data as D


def operand_counts(pairs: np.ndarray, p: int) -> np.ndarray:
    """Training pairs holding each operand token 0..p-1, (t, t) once: data.pairs_holding, the one rule."""
    return D.pairs_holding(pairs, p)


def rare_tokens(train_counts: np.ndarray, k: int) -> np.ndarray:
    """The k least-trained tokens among those with a training pair, plus every token tied with the k-th,
    sorted. Token ids never decide: a tie at the cut-off takes all the tied tokens in."""
    present = np.flatnonzero(train_counts > 0)
    if k <= 0 or len(present) == 0:
        return np.zeros(0, dtype=np.int64)
    cut = np.sort(train_counts[present])[min(k, len(present)) - 1]
    rare: np.ndarray = present[train_counts[present] <= cut]
    return rare.astype(np.int64)


def absent_tokens(train_counts: np.ndarray) -> np.ndarray:
    """The operand tokens with no training pair."""
    return np.flatnonzero(train_counts == 0).astype(np.int64)


def token_sets(train_pairs: np.ndarray, p: int, k: int, target: np.ndarray) -> TokenSets:
    """The roles of the operand tokens in a split: rare (k least trained), absent, target, and pair counts."""
    counts = operand_counts(train_pairs, p)
    return TokenSets(
        tuple(rare_tokens(counts, k).tolist()),
        tuple(absent_tokens(counts).tolist()),
        tuple(int(t) for t in target),
        tuple(counts.tolist()),
    )


def split_tokens(cfg: RunConfig) -> TokenSets:
    """The token sets of the split a run with this config trains on: the split is a function of the data
    config and the seed, so this is what its evaluation used (for a run directory that did not log them)."""
    pairs = D.operand_pairs(cfg.data)[D.make_split(cfg.data, cfg.train.seed).train]
    return token_sets(pairs, cfg.data.p, cfg.probe.rare_k, D.starved_tokens(cfg.data, cfg.train.seed))


class RareTokenAccuracy:
    """Reduces a test set's per-example correctness to rare/common and per-token accuracies."""

    def __init__(
        self,
        train_pairs: np.ndarray,
        test_pairs: np.ndarray,
        p: int,
        vocab: int,
        k: int,
        device: torch.device,
        target: np.ndarray | None = None,
    ) -> None:
        self.p = p
        self.vocab = vocab  # per-token arrays cover the vocabulary; op and '=' stay NaN
        counts = operand_counts(train_pairs, p)
        self.rare = rare_tokens(counts, k)
        self.absent = absent_tokens(counts)
        self.target = np.zeros(0, dtype=np.int64) if target is None else np.asarray(target, dtype=np.int64)

        def holding(tokens: np.ndarray) -> np.ndarray:
            return np.isin(test_pairs[:, 0], tokens) | np.isin(test_pairs[:, 1], tokens)

        absent_mask = holding(self.absent)
        rare_mask = holding(self.rare) & ~absent_mask  # a pair with an absent token is scored as absent
        common_mask = ~rare_mask & ~absent_mask
        target_mask = holding(self.target)
        self.masks = [torch.as_tensor(m, device=device) for m in (rare_mask, common_mask, absent_mask, target_mask)]
        self.sizes = [int(m.sum()) for m in (rare_mask, common_mask, absent_mask, target_mask)]
        self.n_rare, self.n_common, self.n_absent, self.n_target = self.sizes
        a, b = test_pairs[:, 0], test_pairs[:, 1]
        self.a = torch.as_tensor(a, device=device)
        # b's credit goes to b only where b ≠ a, so a pair (t, t) counts once for t
        b_other = np.where(a != b, b, vocab)  # slot `vocab` collects nothing that is read
        self.b_other = torch.as_tensor(b_other, device=device)
        n_with = np.bincount(a, minlength=vocab + 1) + np.bincount(b_other, minlength=vocab + 1)
        self.n_with = torch.as_tensor(n_with[:vocab].astype(np.float64), device=device)  # test pairs holding t

    def reduce(self, hits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """From per-example correctness (N_test,) bool: [val_acc_rare, val_acc_common, val_acc_absent,
        val_acc_target] (engine/rundir/columns.py RARE_COLUMNS) and the per-token accuracy (vocab,), all float64
        on the device (NaN where a set is empty)."""
        h = hits.double()
        nan = torch.tensor(float("nan"), dtype=torch.float64, device=h.device)
        accs = [h[m].sum() / n if n else nan for m, n in zip(self.masks, self.sizes, strict=True)]
        per = torch.bincount(self.a, weights=h, minlength=self.vocab + 1) + torch.bincount(
            self.b_other, weights=h, minlength=self.vocab + 1
        )
        per_token = torch.where(self.n_with > 0, per[: self.vocab] / self.n_with.clamp(min=1), nan)
        return torch.stack(accs), per_token


def resolve_tokens(spec: TokenSpec, sets: TokenSets, p: int, where: str = "token set") -> list[int]:
    """The token ids a TokenSpec names in a split with these sets, sorted; ConfigError for an id past p."""
    out: set[int] = set()
    for role in spec.roles:
        out.update({"targets": sets.target, "rare": sets.rare, "absent": sets.absent}[role])
    for t in spec.ids:
        if t >= p:
            raise ConfigError(f"{where}: token {t} is not an operand (0..{p - 1})")
        out.add(t)
    return sorted(out)
