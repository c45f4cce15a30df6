"""Singular-value measures of E, W and EW, shared by the rank probe and adaptive Adam-LR."""

from __future__ import annotations

import math

import torch

# Numerical rank counts σ_i > RANK_TOL · σmax (docs/PROBES.md explains the choice).
RANK_TOL = 1e-3


@torch.no_grad()
def singular_values(m: torch.Tensor) -> torch.Tensor:
    """σ_1 ≥ σ_2 ≥ ... of a matrix, computed in float64 on the CPU (LAPACK is exact enough and fast here)."""
    s: torch.Tensor = torch.linalg.svdvals(m.detach().to("cpu", torch.float64))
    return s


@torch.no_grad()
def sigma_max(m: torch.Tensor) -> float:
    """Largest singular value σmax(M) (Prop. 4.1)."""
    return float(singular_values(m)[0])


def numerical_rank(s: torch.Tensor, tol: float = RANK_TOL) -> int:
    """#{i : σ_i > tol · σ_1}: a scale-free count (a matrix and 10× it have the same rank)."""
    if s.numel() == 0 or float(s[0]) == 0.0:
        return 0
    return int((s > tol * s[0]).sum())


def effective_rank(s: torch.Tensor) -> float:
    """exp(H(p)) with p_i = σ_i / Σσ_j (Roy & Vetterli, 2007); 1 for rank one, n for n equal σ."""
    total = float(s.sum())
    if not math.isfinite(total):
        return float("nan")
    if total == 0.0:
        return 0.0
    p = s[s > 0] / total
    return float(torch.exp(-(p * p.log()).sum()))


def reader_matrix(w: torch.Tensor, d: int) -> torch.Tensor | None:
    """W as an (out, k·d) matrix that reads k concatenated d-dimensional embeddings, or None.

    nn.Linear stores (out, in); a (n_heads, d, d_head) tensor (TransformerLens layout) becomes (n_heads·d_head, d).
    """
    if w.ndim == 2 and w.shape[1] % d == 0:
        return w
    if w.ndim == 2 and w.shape[0] % d == 0:
        return w.T
    if w.ndim == 3 and w.shape[1] == d:
        return w.permute(0, 2, 1).reshape(-1, d)  # (h, d, d_head) -> (h·d_head, d)
    return None


def stacked_w(ws: list[torch.Tensor], d: int) -> torch.Tensor | None:
    """The W matrices that read E, stacked along their outputs: one map from the E-space to all of them."""
    mats = [m for m in (reader_matrix(w.detach(), d) for w in ws) if m is not None]
    if not mats or len(mats) != len(ws) or len({m.shape[1] for m in mats}) != 1:
        return None
    return torch.cat(mats, 0)


def ew_matrix(e: torch.Tensor, w: torch.Tensor, d: int) -> torch.Tensor:
    """EW: the map from token one-hots at each position to the pre-activations that W computes.

    With W = [W_0 | W_1 | ... | W_{k-1}], W_j the (out, d) slice reading position j, the pre-activation of
    eq. 2 is Σ_j W_j e_{x_j}, so the map from the k stacked one-hots (k·V) to (out) is
    M = [E W_0ᵀ; E W_1ᵀ; ...; E W_{k-1}ᵀ] of shape (k·V, out) = blockdiag(E, ..., E) · Wᵀ.
    """
    k = w.shape[1] // d
    return torch.cat([e @ w[:, j * d : (j + 1) * d].T for j in range(k)], 0)  # (k·V, out)
