"""Gradient transforms applied between backward and the optimizer step (Grokfast-EMA, ⊥Grad).

Each hook is an object: calling it rewrites `.grad` in place, and `state_dict()` /
`load_state_dict()` carry whatever it remembers across steps, so a resumed run is bit-for-bit
the run that never stopped.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch
from torch import nn

from engine.config import RunConfig


class GradHook(Protocol):
    """A gradient transform: calling it rewrites the parameters' `.grad` in place; its memory is its state."""

    def __call__(self) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, s: dict[str, Any]) -> None: ...


class GrokfastEMA:
    """Grokfast-EMA (Lee et al. 2024): a low-pass filter of the gradient, added back amplified.

    Per parameter, h ← α·h + (1−α)·g, then g ← g + λ·h, with h = g at the first step
    (the filter starts from the first gradient, not from zero).
    """

    def __init__(self, model: nn.Module, alpha: float, lamb: float) -> None:
        self.params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        self.alpha, self.lamb = alpha, lamb
        self.ema: dict[str, torch.Tensor] = {}

    @torch.no_grad()
    def __call__(self) -> None:
        for name, p in self.params:
            if p.grad is None:
                continue
            h = self.ema.get(name)
            if h is None:
                self.ema[name] = h = p.grad.detach().clone()
            else:
                h.mul_(self.alpha).add_(p.grad, alpha=1 - self.alpha)
            p.grad.add_(h, alpha=self.lamb)

    def state_dict(self) -> dict[str, Any]:
        return {"ema": {n: h.detach().cpu().clone() for n, h in self.ema.items()}}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        dev = {n: p for n, p in self.params}
        self.ema = {n: h.to(device=dev[n].device, dtype=dev[n].dtype) for n, h in s["ema"].items()}


class OrthogonalGrad:
    """⊥Grad (Prieto et al. 2025): drop the gradient component parallel to the weights.

    Per parameter, flattened: g⊥ = g − (w·g / w·w)·w, rescaled to ‖g‖ as in the authors' code, so
    the step size is unchanged and only its direction (no more growth along w) differs. Parameters
    with one element are left alone. Stateless.
    """

    def __init__(self, model: nn.Module) -> None:
        self.params = [p for p in model.parameters() if p.requires_grad and p.numel() > 1]

    @torch.no_grad()
    def __call__(self) -> None:
        for p in self.params:
            if p.grad is None:
                continue
            w, g = p.detach().reshape(-1), p.grad.reshape(-1)
            g_perp = g - (torch.dot(w, g) / (torch.dot(w, w) + 1e-30)) * w  # w = 0 leaves g as it is
            g_perp.mul_(g.norm() / g_perp.norm().clamp_min(1e-30))
            p.grad.copy_(g_perp.view_as(p.grad))

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        pass


def build_grad_hooks(cfg: RunConfig, model: nn.Module) -> list[GradHook]:
    """Hooks run in order after `loss.backward()`: Grokfast first, then ⊥Grad on the filtered gradient."""
    o = cfg.optim
    hooks: list[GradHook] = []
    if o.grokfast_alpha > 0 or o.grokfast_lambda > 0:
        hooks.append(GrokfastEMA(model, o.grokfast_alpha, o.grokfast_lambda))
    if o.orthogonal:
        hooks.append(OrthogonalGrad(model))
    return hooks
