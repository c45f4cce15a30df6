"""Per-token embedding gradient norms for tokens.csv: the data behind the heat maps of Fig. 3."""

from __future__ import annotations

from typing import Any

import torch

from engine.probes.base import Blocks, Probe, ProbeContext


class GradProbe(Probe):
    """grad_norm[i] = ‖∇_{e_i} L‖₂ of the last training batch before the evaluation.

    The gradient is the one the optimizer is about to use (after any gradient filter, before weight decay).
    A token absent from that batch gets exactly 0: the sparse columns of Fig. 3. `on_step` keeps a reference
    to E.grad, no copy and no host sync; `zero_grad(set_to_none=True)` then leaves it untouched.
    """

    name = "grad"

    def __init__(self, ctx: ProbeContext, blocks: Blocks) -> None:
        super().__init__(ctx.cfg.probe.grad_every if blocks.e_names else 0)
        self.grad = ctx.grad
        self.e_name = blocks.e_names[0] if blocks.e_names else ""
        self.last: torch.Tensor | None = None

    def on_step(self, x: torch.Tensor) -> None:
        self.last = self.grad(self.e_name) if self.e_name else None

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        if self.last is None:  # no training step yet (the evaluation at step 0)
            return {}
        # the norms on the run's device, in float64 as before: one read of V numbers, not of the V × d gradient
        return {"grad_norm": tuple(self.last.to(torch.float64).norm(dim=1).tolist())}
