"""The Fourier spectrum of the operand embeddings (App. C.3, Fig. 11) and its top-k concentration."""

from __future__ import annotations

from typing import Any

import torch

from engine.config import ConfigError, RunConfig
from engine.probes.base import Blocks, Probe
from engine.task.dlog import dlog_order
from engine.task.numbers import is_prime
from engine.task.numbers import primitive_root as primitive_root  # where the tests and callers look for it


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

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        spec = embedding_spectrum(self.blocks.embedding[self.order])  # operand tokens only, in probe.fourier_order
        return {"fourier_top": top_k_share(spec, self.k), "fourier": tuple(spec.tolist())}
