"""StableMax cross-entropy against its formula (Prieto et al. 2025, eqs. for s(x) and StableMax)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from engine.train.losses import build_loss, stablemax_cross_entropy, stablemax_s


def s_by_hand(x: float) -> float:
    return x + 1 if x >= 0 else 1 / (1 - x)


def test_s_is_the_piecewise_formula_and_continuous_at_zero() -> None:
    xs = [-100.0, -3.0, -0.5, -1e-9, 0.0, 1e-9, 0.5, 3.0, 1e6]
    got = stablemax_s(torch.tensor(xs, dtype=torch.float64)).tolist()
    assert got == pytest.approx([s_by_hand(x) for x in xs], rel=1e-15)
    assert all(v > 0 for v in got)


def test_stablemax_cross_entropy_against_the_formula() -> None:
    logits = [[2.0, -1.0, 0.5, -4.0], [0.0, 0.0, 0.0, 0.0], [-2.0, 10.0, -0.1, 3.0]]
    ys = [0, 3, 1]
    want = []
    for row, label in zip(logits, ys, strict=True):
        s = [s_by_hand(v) for v in row]
        want.append(-math.log(s[label] / sum(s)))  # L = -log( s(z_y) / Σ_j s(z_j) )
    z, y = torch.tensor(logits), torch.tensor(ys)
    assert stablemax_cross_entropy(z, y, reduction="none").tolist() == pytest.approx(want, rel=1e-6)
    assert stablemax_cross_entropy(z, y).item() == pytest.approx(sum(want) / 3, rel=1e-6)
    assert stablemax_cross_entropy(z, y, reduction="sum").item() == pytest.approx(sum(want), rel=1e-6)
    assert want[1] == pytest.approx(math.log(4))  # equal logits: uniform, as softmax


def test_stablemax_stays_finite_where_softmax_collapses() -> None:
    """Softmax Collapse: float32 softmax CE rounds to exactly 0 (no gradient) at large logit gaps."""
    z = torch.tensor([[120.0, 0.0, -5.0]], requires_grad=True)
    y = torch.tensor([0])
    assert F.cross_entropy(z, y).item() == 0.0
    loss = stablemax_cross_entropy(z, y)
    loss.backward()
    assert z.grad is not None
    assert 0 < loss.item() < 0.1 and torch.isfinite(z.grad).all() and z.grad.abs().sum() > 0
    assert loss.dtype == torch.float32  # computed in float64, returned in the logits' dtype


def test_build_loss() -> None:
    assert build_loss("ce") is F.cross_entropy
    assert build_loss("stablemax") is stablemax_cross_entropy
