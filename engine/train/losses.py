"""Training losses: cross-entropy, and StableMax cross-entropy (Prieto et al., numerical stability)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F


def stablemax_s(x: torch.Tensor) -> torch.Tensor:
    """s(x) = x + 1 for x >= 0, 1 / (1 - x) for x < 0: a softmax replacement that grows linearly."""
    return torch.where(x >= 0, x + 1, 1 / (1 - x.clamp(max=0)))


def stablemax_cross_entropy(logits: torch.Tensor, y: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """-log( s(z_y) / Σ_j s(z_j) ), computed in float64 as the reference implementation does."""
    s = stablemax_s(logits.double())
    logp = torch.log(s.gather(1, y[:, None]).squeeze(1)) - torch.log(s.sum(1))
    loss = -logp
    if reduction == "sum":
        return loss.sum().to(logits.dtype)
    if reduction == "none":
        return loss.to(logits.dtype)
    return loss.mean().to(logits.dtype)


def build_loss(name: str) -> Callable[..., torch.Tensor]:
    return stablemax_cross_entropy if name == "stablemax" else F.cross_entropy
