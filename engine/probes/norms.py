"""Weight norms ‖E‖, ‖W‖, ‖θ‖ and the effective update balance ‖ΔE‖/‖ΔW‖ (App. B, eq. 23)."""

from __future__ import annotations

import math
from typing import Any

import torch

from engine.config import RunConfig
from engine.probes.base import NAN, Blocks, Probe


def frobenius(ts: list[torch.Tensor]) -> float:
    """‖(T_1, T_2, ...)‖_F = sqrt(Σ_j ‖T_j‖_F²), in float64."""
    if not ts:
        return NAN
    return math.sqrt(sum(float(t.detach().to("cpu", torch.float64).pow(2).sum()) for t in ts))


class NormProbe(Probe):
    """norm_E, norm_W and norm_all: Frobenius norms of E, of the W matrices and of all parameters."""

    name = "norm"

    def __init__(self, cfg: RunConfig, blocks: Blocks) -> None:
        super().__init__(cfg.probe.norm_every)
        self.blocks = blocks
        self.columns = (["norm_E"] if blocks.e_names else []) + (["norm_W"] if blocks.w_names else []) + ["norm_all"]

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        b = self.blocks
        out: dict[str, Any] = {}
        if b.e_names:
            out["norm_E"] = frobenius([b.embedding])
        if b.w_names:
            out["norm_W"] = frobenius(b.Ws)
        out["norm_all"] = frobenius([p.detach() for p in b.params.values()])
        return out


class UpdateProbe(Probe):
    """update_ratio = ‖E_t − E_s‖_F / ‖W_t − W_s‖_F, s the previous time this probe ran (NaN the first time).

    Adam-LR is meant to bring it towards the balance of eq. 23; plain Adam leaves E under-updated.
    """

    name = "update"

    def __init__(self, cfg: RunConfig, blocks: Blocks) -> None:
        super().__init__(cfg.probe.update_every if blocks.e_names and blocks.w_names else 0)
        self.blocks = blocks
        self.columns = ["update_ratio"]
        self.snapshot: list[torch.Tensor] | None = None  # [E, W_1, W_2, ...] at the last measurement

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        now = [self.blocks.embedding, *self.blocks.Ws]
        ratio = NAN
        if self.snapshot is not None:
            d_e = frobenius([now[0] - self.snapshot[0].to(now[0])])
            d_w = frobenius([w - s.to(w) for w, s in zip(now[1:], self.snapshot[1:], strict=True)])
            ratio = d_e / d_w if d_w > 0 else NAN
        self.snapshot = [t.clone() for t in now]
        return {"update_ratio": ratio}

    def state_dict(self) -> dict[str, Any]:
        snap = [t.cpu() for t in self.snapshot] if self.snapshot is not None else None
        return {**super().state_dict(), "snapshot": snap}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        super().load_state_dict(s)
        snap = s.get("snapshot")
        self.snapshot = [t.to(self.blocks.embedding.device) for t in snap] if snap is not None else None
