"""The Fourier spectrum of the operand embeddings (App. C.3, Fig. 11) and its top-k concentration.

The members of a stacked model measure together (`share_fourier`): the first one due at a step takes
every member's DFT in one batched call and one copy to the host, instead of one per member.
"""

from __future__ import annotations

from typing import Any

import torch

from engine.config import ConfigError, RunConfig
from engine.config.numbers import is_prime
from engine.config.numbers import primitive_root as primitive_root  # where the tests and callers look for it
from engine.probes.base import Blocks, MemberBatch, Probe, share
from engine.task.dlog import dlog_order


def embedding_spectrum(e: torch.Tensor) -> torch.Tensor:
    """‖Σ_i e_i · exp(−2πi·k·i/p)‖₂ over the embedding axis, for k = 0..⌊p/2⌋; e is (p, d), rows = operands.

    The DFT runs over the token axis, unnormalised; the other frequencies mirror these (k and p−k are conjugate).
    """
    norms: torch.Tensor = torch.fft.rfft(e.detach().to("cpu", torch.float64), dim=0).abs().pow(2).sum(1).sqrt()
    return norms  # (p, d) -> (⌊p/2⌋+1,)


def token_order(cfg: RunConfig) -> torch.Tensor:
    """Rows of E in the order the DFT reads them. `token`: 0..p-1. `dlog`: 1, g, g², …, g^(p-2) mod p, the
    nonzero tokens by discrete logarithm: a ↦ log_g a turns a·b into log a + log b (mod p-1), so on mul
    and div the model's Fourier features live on this axis, not on the token values (Fig. 11)."""
    p = cfg.data.p
    if cfg.probe.fourier_order == "token":
        return torch.arange(p)
    if not is_prime(p):
        raise ConfigError(f"probe.fourier_order: dlog needs a prime data.p (got {p})")
    return torch.as_tensor(dlog_order(p))


def top_k_share(spectrum: torch.Tensor, k: int) -> float:
    """Energy share Σ_top-k |F_k|² / Σ_{k≥1} |F_k|² over the nonzero frequencies (the DC term k=0 is excluded)."""
    energy = spectrum[1:].pow(2)
    total = float(energy.sum())
    if total == 0.0:
        return float("nan")
    return float(energy.topk(min(k, energy.numel())).values.sum()) / total


class FourierProbe(Probe):
    """fourier_top, and the spectrum itself for fourier.csv."""

    name = "fourier"

    def __init__(self, cfg: RunConfig, blocks: Blocks) -> None:
        super().__init__(cfg.probe.fourier_every if blocks.e_names else 0)
        self.blocks, self.p, self.k = blocks, cfg.data.p, cfg.probe.fourier_top_k
        self.order = token_order(cfg)
        self.columns = ["fourier_top"]
        self.batch: MemberBatch | None = None  # the other members of a stacked model (`share_fourier`)

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        if self.batch is not None:
            return self.batch.result(self, step)
        return measure_members([self])[0]


@torch.no_grad()
def measure_members(probes: list[FourierProbe]) -> list[dict[str, Any]]:
    """Each probe's row: its member's operand rows of E (in its probe.fourier_order) stacked (N, p, d) with
    those of the members whose order has as many rows (dlog leaves 0 out), one DFT over the token axis for
    them, one copy to the host; the same numbers as `embedding_spectrum` of each."""
    out: dict[int, dict[str, Any]] = {}
    for n in {len(p.order) for p in probes}:
        group = [p for p in probes if len(p.order) == n]
        rows = torch.stack([p.blocks.embedding[p.order.to(p.blocks.embedding.device)] for p in group])  # (N, n, d)
        specs = torch.fft.rfft(rows.detach().to("cpu", torch.float64), dim=1).abs().pow(2).sum(2).sqrt()  # (N, K)
        for p, spec in zip(group, specs, strict=True):
            out[id(p)] = {"fourier_top": top_k_share(spec, p.k), "fourier": tuple(spec.tolist())}
    return [out[id(p)] for p in probes]


def share_fourier(probes: list[FourierProbe]) -> None:
    """Let the Fourier probes of a stacked model's members measure together."""
    share(probes, measure_members)
