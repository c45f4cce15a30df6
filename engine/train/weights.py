"""Where the members of a training loop keep their weights (engine/train/loop.py).

`OneModel` is one `nn.Module` of any kind, trained through its `forward_train` where it has one (the
gathered first layer), gradient filters allowed. `StackedModels` holds N members of one shape as one
model: each parameter stacked on a leading member axis and run under `torch.vmap`; each member's module
keeps `nn.Parameter`s that alias its slice of the stack (no copy), so its `state_dict` is the member's
weights. Members with equal optimizer settings side by side share one `torch.optim` optimizer over a
module whose parameters alias their rows of the stack (`optimized`): one step per settings, not per member.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any, Protocol

import torch
from torch import nn
from torch.func import functional_call

from engine.config import RunConfig
from engine.models import embedding_names
from engine.probes.base import ProbeContext
from engine.task.dataset import Dataset
from engine.train.evaluation import EVAL_CHUNK, Loss, Scores, evaluate
from engine.train.gradfilters import GradHook, build_grad_hooks

EVAL_ROWS = 65536  # member × example rows per evaluation forward pass of a stacked model


class Weights(Protocol):
    """Where the members' parameters live, and how a batch of each member's examples goes through them."""

    template: nn.Module  # the module `functional_call` and the probes run member parameters with
    e_names: list[str]  # the parameter names of E
    grad_hooks: list[GradHook]
    batched: bool = False

    def losses(self, x: torch.Tensor, y: torch.Tensor, loss_fn: Loss, mask: torch.Tensor | None = None) -> torch.Tensor:
        """(N, B, L), (N, B) -> (N,): each member's mean training loss on its own batch; `mask` (N, B), where
        given, keeps each member's own rows (a shorter batch padded to B), the mean over those."""

    def scores(self, x: torch.Tensor, y: torch.Tensor, loss_fn: Loss) -> list[Scores]:
        """Each member's (loss, accuracy, hits) on a whole set x (N, n, L)."""

    def grad(self, name: str, i: int) -> torch.Tensor | None:
        """Member i's gradient of parameter `name`, between backward and the optimizer step."""

    def params(self, i: int) -> dict[str, torch.Tensor]:
        """Member i's live parameters by name."""

    def module(self, i: int) -> nn.Module:
        """Member i as a module whose parameters are its weights (its optimizer and checkpoint use it)."""

    def context(self, i: int, cfg: RunConfig, data: Dataset, loss_fn: Loss, stop: Callable[[], bool]) -> ProbeContext:
        """Member i as its probes see it."""

    def optimized(self, a: int, b: int) -> nn.Module:
        """The module one optimizer steps for members [a, b): member a's own where b = a + 1."""
        assert b == a + 1
        return self.module(a)

    def zero_grad(self) -> None: ...

    def leaves(self) -> list[torch.Tensor]:
        """The tensors whose `.grad` the training backward writes (what `grad` reads)."""

    def hand_grads(self) -> None:
        """Give the optimized modules' parameters their gradient before the optimizers step."""
        return None  # one module per member: its parameters hold their gradients already


class OneModel(Weights):
    """One member: a plain module, trained through its `forward_train` (the gathered first layer) if it has one."""

    def __init__(self, model: nn.Module, cfg: RunConfig) -> None:
        self.template = self.model = model
        self.e_names = embedding_names(model)
        self.grad_hooks = build_grad_hooks(cfg, model)
        self.named: dict[str, torch.Tensor] = dict(model.named_parameters())
        self.forward = getattr(model, "forward_train", model)  # MLPEmbed: models/first_layer.py

    def losses(self, x: torch.Tensor, y: torch.Tensor, loss_fn: Loss, mask: torch.Tensor | None = None) -> torch.Tensor:
        assert mask is None, "one model draws its own batch: never padded"
        return loss_fn(self.forward(x[0]), y[0])[None]  # (B, L) -> (1,)

    def scores(self, x: torch.Tensor, y: torch.Tensor, loss_fn: Loss) -> list[Scores]:
        was_training = self.model.training
        self.model.eval()
        out = evaluate(self.model, loss_fn, x[0], y[0], EVAL_CHUNK)
        self.model.train(was_training)
        return [out]

    def grad(self, name: str, i: int) -> torch.Tensor | None:
        return self.named[name].grad

    def params(self, i: int) -> dict[str, torch.Tensor]:
        return self.named

    def module(self, i: int) -> nn.Module:
        return self.model

    def context(self, i: int, cfg: RunConfig, data: Dataset, loss_fn: Loss, stop: Callable[[], bool]) -> ProbeContext:
        return ProbeContext.of_model(cfg, self.model, loss_fn, data.x_train, data.y_train, stop)

    def zero_grad(self) -> None:
        self.model.zero_grad(set_to_none=True)

    def leaves(self) -> list[torch.Tensor]:
        return [p for p in self.model.parameters() if p.requires_grad]


class StackedModels(Weights):
    """N members of one shape as one model: each parameter stacked on a leading member axis, run under vmap."""

    batched = True

    def __init__(self, models: list[nn.Module]) -> None:
        self.template = models[0]
        self.e_names = embedding_names(self.template)
        self.grad_hooks = []
        self.stacked: dict[str, torch.Tensor] = {}
        for name, p in self.template.named_parameters():
            stacked = torch.stack([dict(m.named_parameters())[name].detach() for m in models])
            self.stacked[name] = stacked.requires_grad_(p.requires_grad)
        # Each member module's parameters become views of its slice of the stacked tensors: its optimizer
        # then updates the stacked model in place, and its state_dict is the member's weights.
        self.named = [self._alias(m, i) for i, m in enumerate(models)]
        self.models = models
        self._optimized: list[tuple[slice | int, dict[str, nn.Parameter]]] = []  # (rows, parameters) per optimizer

    def optimized(self, a: int, b: int) -> nn.Module:
        """Members [a, b) as one module whose parameters are the rows a:b of the stacked tensors (a
        leading axis of b - a), so that one optimizer steps them together; member a's own for one.
        `hand_grads` gives its parameters their rows of the stacked gradients from then on."""
        if b == a + 1:
            m = self.models[a]
            self._optimized.append((a, self.named[a]))
            return m
        m = copy.deepcopy(self.template)
        self._optimized.append((slice(a, b), self._alias(m, slice(a, b))))
        return m

    def _alias(self, m: nn.Module, rows: slice | int) -> dict[str, nn.Parameter]:
        """Replace m's parameters by views of `rows` of the stacked tensors (no copy); its parameters by name."""
        for name, p in list(m.named_parameters()):
            owner, _, leaf = name.rpartition(".")
            alias = nn.Parameter(self.stacked[name].detach()[rows], requires_grad=p.requires_grad)
            setattr(m.get_submodule(owner) if owner else m, leaf, alias)
        return dict(m.named_parameters())

    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        """(N, B, L) -> (N, B, p): the member model applied to its own parameters and batch."""
        logits: torch.Tensor = torch.vmap(lambda p, xb: functional_call(self.template, p, (xb,)))(self.stacked, x)
        return logits

    def losses(self, x: torch.Tensor, y: torch.Tensor, loss_fn: Loss, mask: torch.Tensor | None = None) -> torch.Tensor:
        if mask is None:
            return torch.vmap(loss_fn)(self._logits(x), y)  # (N,)
        rows = torch.vmap(functools.partial(loss_fn, reduction="none"))(self._logits(x), y)  # (N, B)
        w = mask.to(rows.dtype)
        return (rows * w).sum(1) / w.sum(1)  # each member's mean over its own rows; a pad's gradient is 0

    def scores(self, x: torch.Tensor, y: torch.Tensor, loss_fn: Loss) -> list[Scores]:
        n = x.shape[0]
        loss, acc, hits = evaluate(self._logits, loss_fn, x, y, max(EVAL_ROWS // n, 1))
        return [(loss[i], acc[i], hits[i]) for i in range(n)]

    def grad(self, name: str, i: int) -> torch.Tensor | None:
        g = self.stacked[name].grad
        return g[i] if g is not None else None

    def params(self, i: int) -> dict[str, torch.Tensor]:
        return {n: p.detach()[i] for n, p in self.stacked.items()}

    def module(self, i: int) -> nn.Module:
        return self.models[i]

    def context(self, i: int, cfg: RunConfig, data: Dataset, loss_fn: Loss, stop: Callable[[], bool]) -> ProbeContext:
        return ProbeContext(
            cfg,
            self.template,
            self.params(i),
            loss_fn,
            data.x_train,
            data.y_train,
            lambda name: self.grad(name, i),
            stop,
        )

    def zero_grad(self) -> None:
        for p in self.stacked.values():
            p.grad = None
        for _, named in self._optimized:
            for p in named.values():
                p.grad = None

    def leaves(self) -> list[torch.Tensor]:
        return [p for p in self.stacked.values() if p.requires_grad]

    def hand_grads(self) -> None:
        for name, p in self.stacked.items():
            if p.grad is not None:
                for rows, named in self._optimized:
                    named[name].grad = p.grad[rows]


def stack_draws(draws: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor | None, list[int] | None]:
    """Each member's drawn example indices (b_i,) as one (N, B) block, B the longest b_i; with the mask (N, B)
    of each member's own rows and the b_i where some member drew fewer (the last, partial batch of its own
    weighted epoch: engine/task/samplers.py ShuffleSampler), else None. A short batch is padded with its
    own first example, which the mask leaves out of the loss: the tokens present in it stay the same."""
    if len(draws) == 1:
        return draws[0][None], None, None
    lengths = [len(d) for d in draws]  # shapes: no read from the device
    b = max(lengths)
    if min(lengths) == b:
        return torch.stack(draws), None, None
    idx = torch.stack([torch.cat([d, d[:1].expand(b - len(d))]) for d in draws])  # (N, B)
    own = torch.arange(b, device=idx.device)[None, :] < torch.tensor(lengths, device=idx.device)[:, None]
    return idx, own, lengths


def to_cpu(obj: Any) -> Any:
    """A checkpoint's tensors copied to the CPU (an ended member's state waits there for the end of the batch)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().clone()
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(to_cpu(v) for v in obj)
    return obj
