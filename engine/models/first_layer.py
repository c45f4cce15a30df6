"""The first layer of eq. 2 computed from per-position tables T_l = E W_lᵀ (V×H), gathered by token.

Which is cheaper depends on the batch: forward and backward cost 6·L·V·d·H FLOP through the tables
against 6·B·L·d·H for the plain Linear, so the tables pay only when B > V (`tables_pay`). At p = 97
(V = 99) and batch 64 the plain Linear does 101 MFLOP where the tables do 156.

W ê = Σ_l W_l e_{x_l} with W_l the l-th (H×d) block of W, so the pre-activation of example x is
Σ_l T_l[x_l]. Building the tables costs L·V·d·H multiply-adds instead of B·L·d·H: with V = p+2 = 99
tokens and a batch of 512 the first layer's matmul work falls about 5×. The backward pass scatters
∂h into ∂T_l (index_add) and turns it into ∂E = Σ_l ∂T_l W_l and ∂W_l = ∂T_lᵀ E with the same small
matmuls. The result equals `Linear(Embedding(x).flatten(1))` up to float rounding.

`gathered_first_layer` is for the training step only: it is an autograd.Function without
double-backward or forward-mode rules, so probes that differentiate twice use the plain forward.

The FLOP rule is a CPU rule: there a step at batch 512 is matmul-bound. On a GPU it is not (a few
hundred µs of small kernels, recorded as a CUDA graph), and the tables' backward is an index_add of
B·L rows into V rows, whose atomics add in a different order on every run: with the tables two CUDA
runs of one seed parted by step 140 (max |Δ val acc| 0.65 over 1,000 steps); with the plain Linear
they are identical over 600 steps, at the same speed (whole `grok run`, H200: 0.99×, 0.96–1.05;
bench/gpu_agree.py divergence, bench/ab.py, docs/PERFORMANCE.md). So a GPU keeps the plain Linear.
"""

from __future__ import annotations

from typing import Any

import torch


def tables_pay(batch: int, vocab: int, device: str = "cpu") -> bool:
    """True on the CPU when the tables (6·L·V·d·H FLOP per step) cost less than the plain Linear
    (6·B·L·d·H): B > V. Never on another device (see the module docstring)."""
    return device == "cpu" and batch > vocab


def onehot_first_layer(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None, vocab: int) -> torch.Tensor:
    """W [1_{x_0}; …; 1_{x_{L-1}}] + b as a sum of gathered columns: (B, L) tokens, W ∈ R^{H×L·V} -> (B, H).

    Plain indexing, so autograd differentiates it twice (the Hessian probe) and ∂W is an index_add.
    """
    B, L = x.shape
    cols = x + torch.arange(L, device=x.device) * vocab  # column of W for token x_l at position l
    h = W.t().index_select(0, cols.reshape(-1)).view(B, L, -1).sum(1)  # (B·L, H) -> (B, L, H) -> (B, H)
    return h if b is None else h + b


def tables(E: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """T (L, V, H) with T[l] = E W_lᵀ, W = [W_0 … W_{L-1}] ∈ R^{H×L·d}."""
    d = E.shape[1]
    L = W.shape[1] // d  # W is (H, L·d)
    # (V, d)@(d, H) per position; W_l is a strided view, no copy. No out=, so vmap can batch it.
    return torch.stack([E @ W[:, pos * d : (pos + 1) * d].t() for pos in range(L)])


def gather_sum(T: torch.Tensor, x: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """h[i] = b + Σ_l T[l, x[i, l]]: (L, V, H), (B, L) -> (B, H)."""
    L = T.shape[0]
    h = T[0].index_select(0, x[:, 0])
    if bias is not None:
        h += bias
    for pos in range(1, L):
        h += T[pos].index_select(0, x[:, pos])
    return h


class GatheredFirstLayer(torch.autograd.Function):
    """h = Linear(Embedding(x).flatten(1)) via the tables T_l (see the module docstring)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, E: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
        T = tables(E, W)
        ctx.save_for_backward(x, E, W)
        return gather_sum(T, x, b)

    @staticmethod
    def backward(
        ctx: Any, gh: torch.Tensor
    ) -> tuple[None, torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
        x, E, W = ctx.saved_tensors
        V, d = E.shape
        H, Ld = W.shape
        L = Ld // d
        gT = torch.zeros(L, V, H, dtype=gh.dtype, device=gh.device)
        for pos in range(L):
            gT[pos].index_add_(0, x[:, pos], gh)  # ∂T_l[v] = Σ_{i: x_il = v} ∂h_i
        gE = gW = gb = None
        if ctx.needs_input_grad[1]:
            gE = torch.mm(gT[0], W[:, :d])
            for pos in range(1, L):
                gE.addmm_(gT[pos], W[:, pos * d : (pos + 1) * d])  # ∂E = Σ_l ∂T_l W_l: (V, H)@(H, d)
        if ctx.needs_input_grad[2]:
            gW = torch.empty_like(W)
            for pos in range(L):
                torch.mm(gT[pos].t(), E, out=gW[:, pos * d : (pos + 1) * d])  # ∂W_l = ∂T_lᵀ E: (H, V)@(V, d)
        if ctx.needs_input_grad[3]:
            gb = gh.sum(0)
        return None, gE, gW, gb


def gathered_first_layer(x: torch.Tensor, E: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    h: torch.Tensor = GatheredFirstLayer.apply(x, E, W, b)
    return h
