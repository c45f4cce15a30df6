"""The progress probe's torch arithmetic (engine/probes/progress.py) on numpy arrays, for the tests.

Each function here is the engine's own code run on the CPU: numpy arrays in, numpy arrays (0-d ones as
Python numbers) out, so the tests can check it against answers computed another way. `progress_measures`
is what the probe's `logit_measures` finds, read to the host, with the unmodified logits' loss beside it
(the probe never computes that (n², C) pass).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from engine.probes import progress as P


def _to_host(obj: Any) -> Any:
    """Tensors as numpy arrays (0-d ones as Python numbers), inside lists and dataclasses too."""
    if isinstance(obj, torch.Tensor):
        return obj.item() if obj.dim() == 0 else obj.detach().cpu().numpy()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **{f.name: _to_host(getattr(obj, f.name)) for f in dataclasses.fields(obj)})
    if isinstance(obj, list):
        return [_to_host(v) for v in obj]
    return obj


def host_arrays(fn: Callable[..., Any]) -> Callable[..., Any]:
    """numpy arrays in, numpy arrays out: the same torch code run on the CPU for a caller holding arrays.

    Typed as taking and returning anything: a tensor signature would reject the arrays the tests pass."""

    def tensor(a: Any) -> Any:
        return torch.from_numpy(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not any(isinstance(a, np.ndarray) for a in (*args, *kwargs.values())):
            return fn(*args, **kwargs)
        return _to_host(fn(*map(tensor, args), **{k: tensor(v) for k, v in kwargs.items()}))

    return wrapper


answer_positions = host_arrays(P.answer_positions)
profile = host_arrays(P.profile)
gini = host_arrays(P.gini)
embedding_norms = host_arrays(P.embedding_norms)
ring = host_arrays(P.ring)
parallelogram_share = host_arrays(P.parallelogram_share)


@host_arrays
def frequency_shares(table: torch.Tensor, sign: int) -> torch.Tensor:
    """Share of the non-constant energy on each frequency's (i + s·j) terms, w = 1..⌊n/2⌋ (index w-1)."""
    return P._shares_of_profile(P.profile(table, sign), ((table - table.mean((0, 1))) ** 2).sum())


def key_frequencies(shares: torch.Tensor | np.ndarray, n: int) -> list[int]:
    """Frequencies (1-based) with share >= KEY_FACTOR × chance, strongest first, at most KEY_MAX."""
    w, valid = P.key_candidates(torch.as_tensor(shares), n)
    return [k for k, v in zip(w.tolist(), valid.tolist(), strict=True) if v]


def _keys(keys: list[int], n: int, constant: bool) -> torch.Tensor:
    w = torch.tensor(keys, dtype=torch.long)
    return P.frequency_mask(n, w, torch.ones_like(w, dtype=torch.bool), constant=constant)


@host_arrays
def restrict(f: torch.Tensor, keys: list[int]) -> torch.Tensor:
    """A profile f (n, C) projected onto the constant and the key frequencies (over u)."""
    return P.restrict_to(f, _keys(keys, f.shape[0], constant=True))


@host_arrays
def key_energy_share(E: torch.Tensor, keys: list[int]) -> torch.Tensor:
    """Per row of E (n, d): the share of its centred energy on the key frequencies' cos/sin (over the axis)."""
    return P.key_energy_share_of(E, _keys(keys, E.shape[0], constant=False))


@host_arrays
def cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats) of (N, C) float64 logits against (N,) labels; NaN for no rows."""
    if len(y) == 0:
        return torch.tensor(math.nan, dtype=torch.float64)
    return P.row_losses(logits, y).mean()


@host_arrays
def shuffled(E: torch.Tensor, seed: int) -> torch.Tensor:
    """E's rows in the probe's fixed random order: the shuffled-E baseline."""
    return E[torch.as_tensor(P.shuffle_order(E.shape[0], seed), device=E.device)]


@dataclass(frozen=True)
class Measures:
    """What `progress_measures` finds in one logit table, read to the host."""

    shares: np.ndarray  # (⌊n/2⌋,) per-frequency share of non-constant energy
    keys: list[int]
    restricted_loss: float
    excluded_loss: float
    full_loss: float  # the unmodified logits over all axis pairs (the restricted loss's reference)


def progress_measures(
    table: torch.Tensor | np.ndarray,
    y: torch.Tensor | np.ndarray,
    train: torch.Tensor | np.ndarray,
    sign: int,
    fixed: list[int] | None = None,
) -> Measures:
    """`logit_measures` of an (n, n, C) table with (n, n) labels and a (n, n) bool mask of training pairs,
    read to the host."""
    t, labels_, mask = (
        torch.as_tensor(np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a) for a in (table, y, train)
    )
    t, labels_ = t.to(torch.float64), labels_.long()
    m = P.logit_measures(t, labels_, mask.reshape(-1).nonzero()[:, 0], sign, fixed)
    full = P.row_losses(t.reshape(-1, t.shape[2]), labels_.reshape(-1)).mean()
    return Measures(
        m.shares.cpu().numpy(),
        [int(k) for k in m.w[m.valid].tolist()],
        m.restricted_loss.item(),
        m.excluded_loss.item(),
        full.item(),
    )
