"""σmax, numerical rank and effective rank of E, W and EW (App. C.2, Fig. 10)."""

from __future__ import annotations

from typing import Any

import torch

from engine.config import RunConfig
from engine.probes.base import NAN, Blocks, Probe
from engine.spectral import effective_rank, ew_matrix, numerical_rank, sigma_max, singular_values, stacked_w


class RankProbe(Probe):
    """sigma_*, rank_* (σ_i > tol·σmax) and erank_* for E, W and EW; E columns only when the model has E.

    sigma_ratio = σmax(E)/σmax(W) is the spectral factor of adaptive Adam-LR's c (eq. 24).
    """

    name = "rank"

    def __init__(self, cfg: RunConfig, blocks: Blocks) -> None:
        super().__init__(cfg.probe.rank_every if blocks.w_names else 0)
        self.blocks = blocks
        self.tol = cfg.probe.rank_tol
        has_e = bool(blocks.e_names)
        mats = (["E"] if has_e else []) + ["W"] + (["EW"] if has_e else [])
        self.columns = (
            (["sigma_E"] if has_e else [])
            + ["sigma_W"]
            + (["sigma_ratio"] if has_e else [])
            + [f"rank_{m}" for m in mats]
            + [f"erank_{m}" for m in mats]
        )

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        b = self.blocks
        E, Ws = b.E, b.Ws
        if E is not None:
            W = stacked_w(Ws, b.d)
        else:  # the raw MLP: W reads the 4 numbers directly
            W = torch.cat([w.reshape(w.shape[0], -1) for w in Ws], 0) if Ws else None
        spectra: dict[str, torch.Tensor | None] = {"W": singular_values(W) if W is not None else None}
        out: dict[str, Any] = {}
        if E is not None:
            s_e = spectra["E"] = singular_values(E)
            spectra["EW"] = singular_values(ew_matrix(E, W, b.d)) if W is not None else None
            out["sigma_E"] = float(s_e[0])
        # σmax(W) as adaptive Adam-LR uses it: the largest over the W matrices (one for the MLP).
        out["sigma_W"] = max(sigma_max(w) for w in Ws) if len(Ws) > 1 else _first(spectra["W"])
        if E is not None:
            s_w = out["sigma_W"]
            out["sigma_ratio"] = out["sigma_E"] / s_w if s_w > 0 else NAN
        for m, s in spectra.items():
            out[f"rank_{m}"] = numerical_rank(s, self.tol) if s is not None else NAN
            out[f"erank_{m}"] = effective_rank(s) if s is not None else NAN
        return out


def _first(s: torch.Tensor | None) -> float:
    return float(s[0]) if s is not None and s.numel() else NAN
