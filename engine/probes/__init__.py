"""Probes: the paper's instruments, computed inside the engine at evaluation time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from engine.trainer import Trainer


@dataclass
class ProbeResult:
    metrics: dict[str, float] = field(default_factory=dict)  # merged into the metrics.csv row
    grad_norm: tuple[float, ...] | None = None  # per-token ‖∇e_i‖ for tokens.csv
    fourier: tuple[float, ...] | None = None  # spectrum of E for fourier.csv


class ProbeSet:
    """All probes of a run. Interface used by the trainer: columns, on_step, at_eval, state."""

    def __init__(self, cfg: Any, trainer: Trainer) -> None:
        self.cfg = cfg
        self.trainer = trainer

    def columns(self) -> list[str]:
        return []

    def on_step(self, x: torch.Tensor) -> None:
        """Called after backward, before the optimizer step, with the batch tokens."""

    def at_eval(self, step: int) -> ProbeResult:
        return ProbeResult()

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        pass
