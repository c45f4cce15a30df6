"""The gathered first layer equals Linear(Embedding(x).flatten(1)) in value and gradients."""

from __future__ import annotations

import torch

from engine.models.first_layer import gathered_first_layer


def test_gathered_matches_plain_forward_and_backward() -> None:
    g = torch.Generator().manual_seed(0)
    V, d, L, H, B = 13, 8, 4, 32, 64
    x = torch.randint(0, V, (B, L), generator=g)
    E = torch.randn(V, d, generator=g, dtype=torch.float64, requires_grad=True)
    W = torch.randn(H, L * d, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(H, generator=g, dtype=torch.float64, requires_grad=True)
    gh = torch.randn(B, H, generator=g, dtype=torch.float64)

    plain = torch.nn.functional.linear(E[x].flatten(1), W, b)
    grads_plain = torch.autograd.grad(plain, (E, W, b), gh)
    fast = gathered_first_layer(x, E, W, b)
    grads_fast = torch.autograd.grad(fast, (E, W, b), gh)
    torch.testing.assert_close(fast, plain, rtol=1e-12, atol=1e-12)
    for a, c in zip(grads_fast, grads_plain, strict=True):
        torch.testing.assert_close(a, c, rtol=1e-12, atol=1e-12)
