"""Numerical rank, effective rank and the EW map, on matrices whose answer is known by construction."""

from __future__ import annotations

import math

import pytest
import torch

from engine.spectral import effective_rank, ew_matrix, numerical_rank, reader_matrix, sigma_max, singular_values
from engine.trainer import Trainer
from tests.conftest import tiny_config


def _with_spectrum(s: list[float], m: int, n: int, seed: int = 0) -> torch.Tensor:
    """U diag(s) Vᵀ with random orthonormal U (m×k), V (n×k)."""
    g = torch.Generator().manual_seed(seed)
    u, _ = torch.linalg.qr(torch.randn(m, len(s), generator=g, dtype=torch.float64))
    v, _ = torch.linalg.qr(torch.randn(n, len(s), generator=g, dtype=torch.float64))
    return u @ torch.diag(torch.tensor(s, dtype=torch.float64)) @ v.T


def test_numerical_rank_counts_above_relative_threshold() -> None:
    a = _with_spectrum([10.0, 5.0, 1.0, 0.02, 1e-5, 1e-9], 20, 12)
    s = singular_values(a)
    assert numerical_rank(s, 1e-3) == 4  # 0.02 > 10·1e-3 = 0.01 > 1e-5
    assert numerical_rank(s, 1e-2) == 3
    assert numerical_rank(singular_values(1000 * a), 1e-3) == 4  # scale-free
    assert numerical_rank(singular_values(a.float()), 1e-3) == 4
    assert numerical_rank(singular_values(torch.zeros(3, 4)), 1e-3) == 0


def test_effective_rank_known_spectra() -> None:
    assert effective_rank(singular_values(_with_spectrum([3.0], 8, 8))) == pytest.approx(1.0, abs=1e-6)
    assert effective_rank(singular_values(_with_spectrum([2.0] * 5, 9, 7))) == pytest.approx(5.0, rel=1e-9)
    s = torch.tensor([3.0, 1.0], dtype=torch.float64)  # p = (3/4, 1/4)
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert effective_rank(s) == pytest.approx(math.exp(h), rel=1e-12)
    assert effective_rank(torch.zeros(3, dtype=torch.float64)) == 0.0


def test_sigma_max() -> None:
    assert sigma_max(_with_spectrum([7.5, 2.0, 0.1], 6, 5)) == pytest.approx(7.5, rel=1e-12)


def test_ew_is_the_map_from_position_one_hots_to_preactivations() -> None:
    """Row (j·V + t) of EW is the first layer's pre-activation (minus bias) for token t at position j, alone."""
    cfg = tiny_config()
    tr = Trainer(cfg)
    E, W = tr.model.embedding.weight.detach(), tr.model.first_layer.weight.detach()
    V, d, L = E.shape[0], E.shape[1], cfg.data.seq_len
    M = ew_matrix(E, reader_matrix(W, d), d)
    assert M.shape == (L * V, W.shape[0])
    for j, t in [(0, 0), (1, V - 2), (2, 3), (3, V - 1)]:
        x = torch.zeros(L * d)
        x[j * d : (j + 1) * d] = E[t]  # only position j carries token t
        assert torch.allclose(M[j * V + t], W @ x, atol=1e-6)
    # EW = blockdiag(E, ..., E) · Wᵀ, so rank(EW) <= min(rank(E)·L, rank(W))
    assert numerical_rank(singular_values(M)) <= min(L * min(V, d), W.shape[0])


def test_reader_matrix_layouts() -> None:
    d = 4
    assert reader_matrix(torch.zeros(6, 3 * d), d).shape == (6, 3 * d)  # nn.Linear (out, in)
    assert reader_matrix(torch.zeros(d, 6), d).shape == (6, d)  # (in, out)
    assert reader_matrix(torch.zeros(2, d, 3), d).shape == (6, d)  # (heads, d, d_head)
    assert reader_matrix(torch.zeros(5, 7), d) is None
