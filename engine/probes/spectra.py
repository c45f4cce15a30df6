"""σmax, numerical rank and effective rank of E, W and EW (App. C.2, Fig. 10).

The singular values are taken where the weights live (`torch.linalg.svdvals` on the run's device, in
float64), for all the members of a stacked model at once (one batched SVD per matrix), and every
column is computed there too: one read to the host per measurement. On a GPU the host SVDs of the
512 × 512 W were most of the instruments' cost (docs/PERFORMANCE.md); on the CPU this is the same LAPACK
call as before. The host functions of engine/probes/spectral.py give the same numbers
(tests/engine/test_probes_spectra.py).
"""

from __future__ import annotations

from typing import Any

import torch

from engine.config import RunConfig
from engine.probes.base import NAN, Blocks, Probe
from engine.probes.spectral import ew_matrix, stacked_w

MATRICES = ("E", "W", "EW")


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
        self.mats = [m for m in MATRICES if has_e or m == "W"]
        self.columns = (
            (["sigma_E"] if has_e else [])
            + ["sigma_W"]
            + (["sigma_ratio"] if has_e else [])
            + [f"rank_{m}" for m in self.mats]
            + [f"erank_{m}" for m in self.mats]
        )
        self.batch: SpectraBatch | None = None  # the other members of a stacked model (`share_spectra`)

    def matrices(self) -> dict[str, torch.Tensor | None]:
        """E, W (the matrices that read E, stacked) and EW; None where the layout has no such map."""
        b = self.blocks
        E, Ws = b.E, b.Ws
        if E is None:  # the raw MLP: W reads the 4 numbers directly
            return {"W": torch.cat([w.reshape(w.shape[0], -1) for w in Ws], 0) if Ws else None}
        W = stacked_w(Ws, b.d)
        return {"E": E, "W": W, "EW": ew_matrix(E, W, b.d) if W is not None else None}

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        if self.batch is not None:
            return self.batch.result(self, step)
        return measure_members([self])[0]


class SpectraBatch:
    """The rank probes of a stacked model's members: the first one due at a step measures them all."""

    def __init__(self, probes: list[RankProbe]) -> None:
        self.probes = probes
        self.step = -1
        self.rows: dict[int, dict[str, Any]] = {}

    def result(self, probe: RankProbe, step: int) -> dict[str, Any]:
        if step != self.step or id(probe) not in self.rows:
            self.rows = {id(p): r for p, r in zip(self.probes, measure_members(self.probes), strict=True)}
            self.step = step
        return self.rows.pop(id(probe))


def share_spectra(probes: list[RankProbe]) -> None:
    """Let the rank probes of a stacked model's members measure together (one batched SVD per matrix)."""
    if len(probes) > 1:
        batch = SpectraBatch(probes)
        for p in probes:
            p.batch = batch


@torch.no_grad()
def measure_members(probes: list[RankProbe]) -> list[dict[str, Any]]:
    """Each probe's columns, its members' matrices stacked (N, m, n) into one SVD per matrix; one host read."""
    first = probes[0]
    mats = [p.matrices() for p in probes]
    cols: list[torch.Tensor] = []  # each (N,), float64, in `names` order
    names: list[str] = []
    for m in first.mats:
        if mats[0][m] is None:
            continue
        s = torch.linalg.svdvals(torch.stack([cast_f64(ms[m]) for ms in mats]))  # (N, k), descending
        s0 = s[:, 0]
        cols += [s0, (s > first.tol * s0[:, None]).sum(-1).to(s.dtype), effective_ranks(s)]
        names += [f"sigma_{m}", f"rank_{m}", f"erank_{m}"]
    if len(first.blocks.w_names) > 1:  # σmax(W) as adaptive Adam-LR uses it: the largest over the W matrices
        per_w = [
            torch.linalg.svdvals(torch.stack([cast_f64(p.blocks.Ws[j]) for p in probes]))[:, 0]
            for j in range(len(first.blocks.w_names))
        ]
        cols.append(torch.stack(per_w).amax(0))
        names.append("sigma_Wmax")
    host = torch.stack(cols).T.tolist() if cols else [[] for _ in probes]  # the one read per measurement
    out = []
    for values in host:
        got = dict(zip(names, values, strict=True))
        row: dict[str, Any] = {}
        if "E" in first.mats:
            row["sigma_E"] = got.get("sigma_E", NAN)
        row["sigma_W"] = got.get("sigma_Wmax", got.get("sigma_W", NAN))
        if "E" in first.mats:
            s_w = row["sigma_W"]
            row["sigma_ratio"] = row["sigma_E"] / s_w if s_w > 0 else NAN
        for m in first.mats:
            row[f"rank_{m}"] = int(got[f"rank_{m}"]) if f"rank_{m}" in got else NAN
            row[f"erank_{m}"] = got.get(f"erank_{m}", NAN)
        out.append(row)
    return out


def cast_f64(m: torch.Tensor | None) -> torch.Tensor:
    """A matrix in float64 on its own device (the probe's SVDs are float64, as the host's were)."""
    assert m is not None
    return m.detach().to(torch.float64)


def effective_ranks(s: torch.Tensor) -> torch.Tensor:
    """exp(H(p)), p_i = σ_i/Σσ_j, of each row of s (N, k) (engine/probes/spectral.py `effective_rank`, batched):
    0 for an all-zero row, NaN where Σσ is not finite."""
    total = s.sum(-1, keepdim=True)
    p = s / torch.where(total == 0, torch.ones_like(total), total)
    terms = torch.where(s > 0, p * p.clamp_min(torch.finfo(s.dtype).tiny).log(), torch.zeros_like(p))
    h = torch.exp(-terms.sum(-1))
    return torch.where(total[:, 0] == 0, torch.zeros_like(h), torch.where(total[:, 0].isfinite(), h, torch.nan))
