"""What every probe shares: what it may read of a run, its cadence, the E and W blocks, its checkpoint state."""

from __future__ import annotations

from collections.abc import Callable
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


@dataclass(frozen=True)
class ProbeContext:
    """What a probe may read of a run: never the trainer itself, so one run of a batched model is probed alike.

    `params` are the run's live parameters by name (for a member of a batched model, views of its slice of
    the stacked tensors), `model` the module whose forward `functional_call` runs them with, `grad(name)` a
    parameter's gradient between backward and the optimizer step, and `stop_requested()` tells a long
    probe (the Hessian's power iteration) to give up early.
    """

    cfg: RunConfig
    model: nn.Module
    params: dict[str, torch.Tensor]
    loss_fn: Callable[..., torch.Tensor]
    x_train: torch.Tensor
    y_train: torch.Tensor
    grad: Callable[[str], torch.Tensor | None]
    stop_requested: Callable[[], bool]

    @classmethod
    def of_model(
        cls,
        cfg: RunConfig,
        model: nn.Module,
        loss_fn: Callable[..., torch.Tensor],
        x_train: torch.Tensor,
        y_train: torch.Tensor,
        stop_requested: Callable[[], bool],
    ) -> ProbeContext:
        """The context of a plain model: its own parameters and their `.grad`."""
        params = dict(model.named_parameters())
        return cls(cfg, model, dict(params), loss_fn, x_train, y_train, lambda n: params[n].grad, stop_requested)


@dataclass
class Blocks:
    """The parameter blocks the paper studies: E (the embedding) and W (the first matrices reading E)."""

    params: dict[str, torch.Tensor]
    e_names: list[str]
    w_names: list[str]

    @classmethod
    def of(cls, model: nn.Module, cfg: RunConfig, params: dict[str, torch.Tensor] | None = None) -> Blocks:
        """E and W of `model`, read from `params` (default: the model's own parameters)."""
        e = embedding_names(model)
        ps: dict[str, torch.Tensor] = dict(model.named_parameters()) if params is None else params
        return cls(ps, e[:1], [n for n in w_names(model, cfg) if n not in e])

    @property
    def E(self) -> torch.Tensor | None:
        return self.params[self.e_names[0]].detach() if self.e_names else None

    @property
    def embedding(self) -> torch.Tensor:
        """E, for the probes that are on only when the model has one."""
        E = self.E
        if E is None:
            raise ValueError("this probe needs the embedding E, and the model has none")
        return E

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


class MemberBatch:
    """One probe kind over the members of a stacked model: the first member due at a step measures them all
    with `measure_all(probes)` (one batched call, one read to the host) and each member takes its row."""

    def __init__(self, probes: list[Any], measure_all: Callable[[list[Any]], list[dict[str, Any]]]) -> None:
        self.probes, self.measure_all = probes, measure_all
        self.step = -1
        self.rows: dict[int, dict[str, Any]] = {}

    def result(self, probe: Any, step: int) -> dict[str, Any]:
        if step != self.step or id(probe) not in self.rows:
            self.rows = {id(p): r for p, r in zip(self.probes, self.measure_all(self.probes), strict=True)}
            self.step = step
        return self.rows.pop(id(probe))


def share(probes: list[Any], measure_all: Callable[[list[Any]], list[dict[str, Any]]]) -> None:
    """Let these probes (one kind, a stacked model's members, each with a `batch` attribute) measure together."""
    if len(probes) > 1:
        batch = MemberBatch(probes, measure_all)
        for p in probes:
            p.batch = batch
