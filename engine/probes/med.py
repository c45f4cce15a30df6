"""MED, the main embedding difference: how far apart neighbouring operands sit.

From docs/references/beyond-progress-measures.md."""

from __future__ import annotations

from typing import Any

import torch

from engine.config import RunConfig
from engine.probes.base import Blocks, Probe


def main_embedding_difference(e: torch.Tensor) -> float:
    """(1/(p−1)) Σ_{i=0}^{p−2} ‖e_{i+1} − e_i‖₂ over the operand rows e (p, d)."""
    e = e.detach().to("cpu", torch.float64)
    return float((e[1:] - e[:-1]).norm(dim=1).mean())


class MedProbe(Probe):
    """med: the main embedding difference of the operand rows of E."""

    name = "med"

    def __init__(self, cfg: RunConfig, blocks: Blocks) -> None:
        super().__init__(cfg.probe.med_every if blocks.e_names else 0)
        self.blocks, self.p = blocks, cfg.data.p
        self.columns = ["med"]

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        return {"med": main_embedding_difference(self.blocks.embedding[: self.p])}
