"""Adaptive Adam-LR (Prop. 4.1, App. B eq. 24): c = κ · σmax(E)/σmax(W) · f_W/f_E.

The abstract's headline method. Its two factors, as the paper defines them:

- σmax(E) is the largest singular value of the *operand* rows of E (tokens 0..p-1). The op and '='
  rows are in every sequence and are no token of the task; counting them moves σmax(E).
- f_E is the update frequency of E (App. B: "not all tokens appear in every batch"): the mean, over
  the operand tokens present in the training set, of the share of steps whose batch holds the token.
  A token with no training pair is never updated by a gradient whatever the optimizer does, so it is
  left out of the mean rather than counted as a zero that would inflate c. f_W = 1: W is in every step.

The paper gives c ∝ ... without saying whether c is computed once or tracked during training
(Fig. 6's caption says "adaptive", §5.2 "×10"); `optim.adaptive_once` picks the first reading
(c from step 0, then fixed), the default the second (c recomputed every `optim.adaptive_every` steps).
c is clamped to [ratio_min, ratio_max]; `c_raw` (metrics.csv) is the formula's value before the clamp,
so a clamp that binds shows as c_raw ≠ lr_ratio, and summary.json's `c_clamped` counts those times.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from engine.config import RunConfig
from engine.models import embedding_names, w_names
from engine.probes.spectral import sigma_max


class Ratio(NamedTuple):
    """One evaluation of eq. 24: c after the clamp, the formula's value before it, σmax(E), σmax(W)."""

    c: float
    raw: float
    s_e: float
    s_w: float

    @property
    def clamped(self) -> bool:
        return self.c != self.raw


def sigma_e(E: torch.Tensor, p: int) -> float:
    """σmax(E) over the operand rows 0..p-1 only (the op and '=' rows are not the task's tokens)."""
    return sigma_max(E[:p])


def f_e_of_batch(batch: torch.Tensor, present: torch.Tensor) -> float:
    """f_E of one batch: the share of the training set's operand tokens that the batch holds.

    `present` is a bool mask over the p operand tokens: those with at least one training occurrence.
    """
    p = present.numel()
    held = torch.bincount(batch.reshape(-1), minlength=p)[:p] > 0
    return int((held & present).sum().item()) / max(int(present.sum().item()), 1)


def f_e_of_counts(held: int, steps: int, present: torch.Tensor) -> float:
    """f_E over `steps` steps: `held` is Σ over operand tokens of the steps whose batch held the token
    (a token absent from training adds 0), divided by steps × the number of tokens present in training."""
    return held / max(steps * max(int(present.sum().item()), 1), 1)


def adaptive_ratio(
    model: nn.Module, cfg: RunConfig, f_e: float, params: dict[str, torch.Tensor] | None = None
) -> Ratio:
    """c = κ · σmax(E)/σmax(W) · f_W/f_E (eq. 24, f_W = 1), clamped to [ratio_min, ratio_max].

    σmax(W) is the largest over the W matrices (one for the MLP; Q, K, V for the transformer). `params`
    (default: the model's own) are the weights to read, e.g. one member's slice of a batched model.
    """
    o = cfg.optim
    params = dict(model.named_parameters()) if params is None else params
    e_names, w = embedding_names(model), w_names(model, cfg)
    if not e_names or not w:
        return Ratio(o.lr_ratio, o.lr_ratio, float("nan"), float("nan"))
    s_e = sigma_e(params[e_names[0]], cfg.data.p)
    s_w = max(sigma_max(params[n]) for n in w)
    raw = o.kappa * s_e / max(s_w, 1e-12) / max(f_e, 1e-12)
    return Ratio(min(max(raw, o.ratio_min), o.ratio_max), raw, s_e, s_w)
