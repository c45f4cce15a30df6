"""What every probe shares: its cadence, the E and W blocks it reads, and its checkpoint state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from engine.config import RunConfig
from engine.models import embedding_names, w_names

NAN = float("nan")
# The probes' own random stream is seeded from train.seed plus this offset, so it never draws from,
# nor coincides with, the training stream (torch's global generator).
PROBE_SEED_OFFSET = 0x9E37


@dataclass
class Blocks:
    """The parameter blocks the paper studies: E (the embedding) and W (the first matrices reading E)."""

    params: dict[str, nn.Parameter]
    e_names: list[str]
    w_names: list[str]

    @classmethod
    def of(cls, model: nn.Module, cfg: RunConfig) -> Blocks:
        e = embedding_names(model)
        return cls(dict(model.named_parameters()), e[:1], [n for n in w_names(model, cfg) if n not in e])

    @property
    def E(self) -> torch.Tensor | None:
        return self.params[self.e_names[0]].detach() if self.e_names else None

    @property
    def Ws(self) -> list[torch.Tensor]:
        return [self.params[n].detach() for n in self.w_names]

    @property
    def d(self) -> int:
        E = self.E
        return int(E.shape[1]) if E is not None else 0


class Probe:
    """One instrument. Subclasses set `name` and `columns` and implement `measure`.

    A probe with cadence `every` (steps, 0 = off) runs at the first evaluation at or after each
    multiple of `every`, starting with the evaluation at step 0.
    """

    name = ""

    def __init__(self, every: int) -> None:
        self.every = every
        self.next_due = 0
        self.columns: list[str] = []

    @property
    def enabled(self) -> bool:
        return self.every > 0

    def due(self, step: int) -> bool:
        return self.enabled and step >= self.next_due

    def mark(self, step: int) -> None:
        self.next_due = (step // self.every + 1) * self.every

    def on_step(self, x: torch.Tensor) -> None:
        """After backward, before the optimizer step; must not sync with the host."""

    def measure(self, step: int) -> dict[str, Any]:
        """Column values (and `grad_norm` / `fourier` tuples) at this evaluation."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        return {"next_due": self.next_due}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        self.next_due = int(s.get("next_due", 0))
