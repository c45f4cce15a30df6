"""Gradient transforms applied between backward and the optimizer step (Grokfast, ⊥Grad)."""

from __future__ import annotations

from collections.abc import Callable

from torch import nn

from engine.config import RunConfig

GradHook = Callable[[], None]


def build_grad_hooks(cfg: RunConfig, model: nn.Module) -> list[GradHook]:
    """Hooks run in order after `loss.backward()`; empty for the paper's plain setup."""
    return []
