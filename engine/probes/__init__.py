"""Probes: the paper's instruments, computed inside the engine at evaluation time (docs/PROBES.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from engine.events import CircuitLogged
from engine.probes.balance import BalanceProbe
from engine.probes.base import NAN, Blocks, Probe, ProbeContext
from engine.probes.fourier import FourierProbe
from engine.probes.gradients import GradProbe
from engine.probes.hessian import HessianProbe
from engine.probes.med import MedProbe
from engine.probes.norms import NormProbe, UpdateProbe
from engine.probes.progress import ProgressProbe
from engine.probes.spectra import RankProbe
from engine.probes.targets import TargetProbe

# Cadences (steps) at which every probe together costs at most 15% of training wall time on `embed_mul`
# (eval_every 100): measured as docs/PROBES.md records. Presets that switch probes on use these.
DEFAULT_CADENCES: dict[str, int] = {
    "probe.hessian_every": 1000,
    "probe.rank_every": 500,
    "probe.grad_every": 100,
    "probe.fourier_every": 100,
    "probe.med_every": 100,
    "probe.norm_every": 100,
    "probe.update_every": 100,
}


@dataclass
class ProbeResult:
    """What the probes due at one evaluation measured."""

    metrics: dict[str, float] = field(default_factory=dict)  # merged into the metrics.csv row
    grad_norm: tuple[float, ...] | None = None  # per-token ‖∇e_i‖ for tokens.csv
    fourier: tuple[float, ...] | None = None  # spectrum of E for fourier.csv
    circuit: CircuitLogged | None = None  # key-frequency shares and the ring for keyfreq.csv, ring.csv


class ProbeSet:
    """All probes of a run. Interface used by the trainer: columns, on_step, at_eval, state."""

    def __init__(self, ctx: ProbeContext) -> None:
        cfg = ctx.cfg
        blocks = Blocks.of(ctx.model, cfg, ctx.params)
        every: list[Probe] = [
            HessianProbe(ctx, blocks),
            RankProbe(cfg, blocks),
            NormProbe(cfg, blocks),
            UpdateProbe(cfg, blocks),
            MedProbe(cfg, blocks),
            FourierProbe(cfg, blocks),
            GradProbe(ctx, blocks),
            ProgressProbe(ctx, blocks),
            TargetProbe(ctx, blocks),
            BalanceProbe(ctx, blocks),
        ]
        self.probes = [p for p in every if p.enabled]
        self._stepping = [p for p in self.probes if type(p).on_step is not Probe.on_step]

    @property
    def steps(self) -> bool:
        """Whether some probe wants `on_step` after every backward (the gradient probe)."""
        return bool(self._stepping)

    def columns(self) -> list[str]:
        """The metrics.csv columns the enabled probes produce, in a fixed order."""
        return [c for p in self.probes for c in p.columns]

    def on_step(self, x: torch.Tensor) -> None:
        """Called after backward, before the optimizer step, with the batch tokens."""
        for p in self._stepping:
            p.on_step(x)

    def at_eval(self, step: int) -> ProbeResult:
        """Run the probes that are due; the columns of the others are NaN (an empty cell in metrics.csv)."""
        result = ProbeResult()
        for p in self.probes:
            if not p.due(step):
                result.metrics.update(dict.fromkeys(p.columns, NAN))
                continue
            values = p.measure(step)
            p.mark(step)
            result.grad_norm = values.pop("grad_norm", result.grad_norm)
            result.fourier = values.pop("fourier", result.fourier)
            result.circuit = values.pop("circuit", result.circuit)
            result.metrics.update({c: float(values.get(c, NAN)) for c in p.columns})
        return result

    def state_dict(self) -> dict[str, Any]:
        return {p.name: p.state_dict() for p in self.probes}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        for p in self.probes:
            if p.name in s:
                p.load_state_dict(s[p.name])
