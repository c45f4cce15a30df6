"""Per-token embedding gradient norms for tokens.csv: the data behind the heat maps of Fig. 3.

The members of a stacked model measure together (`share_grads`): one norm over every member's gradient
and one read to the host, instead of one per member.
"""

from __future__ import annotations

from typing import Any

import torch

from engine.probes.base import Blocks, MemberBatch, Probe, ProbeContext, share


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
        self.batch: MemberBatch | None = None  # the other members of a stacked model (`share_grads`)

    def on_step(self, x: torch.Tensor) -> None:
        self.last = self.grad(self.e_name) if self.e_name else None

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        if self.batch is not None:
            return self.batch.result(self, step)
        return measure_members([self])[0]


@torch.no_grad()
def measure_members(probes: list[GradProbe]) -> list[dict[str, Any]]:
    """Each probe's row: the norms on the run's device, in float64, of every member's last gradient at once;
    one read of N × V numbers, not of the gradients. A member with no training step yet (the evaluation at
    step 0) gets none."""
    have = [(p, p.last) for p in probes if p.last is not None]
    grads = [g.to(torch.float64) for _, g in have]
    norms = torch.stack(grads).norm(dim=2).tolist() if grads else []  # (N, V, d) -> (N, V)
    rows = {id(p): {"grad_norm": tuple(n)} for (p, _), n in zip(have, norms, strict=True)}
    return [rows.get(id(p), {}) for p in probes]


def share_grads(probes: list[GradProbe]) -> None:
    """Let the gradient probes of a stacked model's members measure together."""
    share(probes, measure_members)
