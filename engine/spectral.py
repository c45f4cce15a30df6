"""Singular-value measures of E, W and EW, shared by the rank probe and adaptive Adam-LR."""

from __future__ import annotations

import torch


@torch.no_grad()
def sigma_max(m: torch.Tensor) -> float:
    """Largest singular value σmax(M) (Prop. 4.1)."""
    return float(torch.linalg.svdvals(m.detach().double())[0])
