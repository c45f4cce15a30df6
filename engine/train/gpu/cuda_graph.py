"""The training step as CUDA graphs: a launch-bound step replayed with one launch.

At p = 97 a step is about 60 small kernels and 0.6 ms of GPU work, and the host's launches of them
set its pace (docs/PERFORMANCE.md, the GPU runs). A `torch.cuda.CUDAGraph` records the step once —
the batch gather from the sampler's indices, forward, backward, the optimizers' fused updates and the
token counts — and each later step copies the new indices into the graph's input and replays it.

What a recording needs, and how the trajectory stays the eager one:
- Step arguments the replay can read: each optimizer group's lr is a device tensor (engine/train/optim.py
  `tensor_lrs`) that the fused Adam kernel reads at each launch, so a schedule (warm-up, cosine) and
  adaptive c (Prop. 4.1, recomputed from the weights every optim.adaptive_every steps) are written into
  it between replays, and every paper preset records. Gradient filters (they hold state between steps)
  and SGD (its first step differs from the rest) keep the eager step.
- Gradients read between backward and the update (the gradient sampler, the gradient-norm probe): the
  step is recorded in two halves, gradients then update, replayed one after the other with the host's
  reading between them, where the eager step has it.
- Warm-up before capture (lazy state: the optimizer's moments, the BLAS handles): one step is run on a
  side stream and then undone — parameters copied back and optimizer state restored, moments that the
  warm-up created set to zero, which is Adam's fresh state — so the run goes on from the same weights.
- Gradients allocated inside the recording: they start at None, so replay writes them, not adds to them.
- One graph per batch shape (the last batch of a shuffled epoch is shorter): at most `MAX_GRAPHS`, and
  any other shape takes the eager step.

Replays run the eager step's kernels in its order: on an H200 the first 20 steps of random_mul and
adamlr_mul were equal bit for bit (bench/gpu_speed.py graph; docs/PERFORMANCE.md). On the CPU the same warm-up,
undo and replay bookkeeping runs with `eager_recorder`, which tests/engine/test_cuda_graph.py checks
bit for bit against the eager loop.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Protocol, cast

import torch

from engine.config import RunConfig
from engine.probes.recorder import Recorder, cuda_recorder, eager_recorder

__all__ = ["MAX_GRAPHS", "StepGraph", "StepLoop", "cuda_recorder", "eager_recorder", "unfit"]
from engine.train.optim import tensor_lrs
from engine.train.weights import Weights

MAX_GRAPHS = 2  # the full batch and an epoch's short last batch
WARMUP_STEPS = 1


class StepLoop(Protocol):
    """What a recording reads of the training loop (engine/train/loop.py)."""

    cfgs: list[RunConfig]
    device: torch.device
    weights: Weights
    opts: list[torch.optim.Optimizer]

    def gradients(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]: ...

    def apply(self) -> None: ...

    def count_tokens(self, x: torch.Tensor) -> None: ...


def unfit(loop: StepLoop) -> str | None:
    """Why this loop's step cannot be recorded (None: it can), in words for summary.json."""
    c = loop.cfgs[0]
    if not c.train.cuda_graph:
        return "train.cuda_graph = false"
    if any(cfg.optim.name not in ("adam", "adamw") for cfg in loop.cfgs):
        return f"optim.name = {c.optim.name} (Adam and AdamW only)"
    if loop.weights.grad_hooks:
        return "a gradient filter"
    if loop.device.type != "cuda":
        return f"{loop.device.type} device"
    return None


class StepGraph:
    """One batch shape's recorded step: `replay(idx)` trains one step on the rows `idx` (N, B).

    `split`: recorded as two parts, the gradients and the update, so that `replay`'s `between(x)` reads
    the step's gradients before the optimizers use them; else one part, one launch.
    """

    def __init__(self, loop: StepLoop, idx: torch.Tensor, recorder: Recorder, split: bool = False) -> None:
        self.loop = loop
        self.idx = idx.clone()  # the recording's input: each replay copies the step's indices here
        self.x = self.losses = idx  # the recording's outputs, set by `_gradients`: batch tokens, losses (N,)
        self._params = params = [p for opt in loop.opts for p in _params(opt)]
        self._grads: list[tuple[torch.Tensor, torch.Tensor | None]] = []
        for opt in loop.opts:
            tensor_lrs(opt, idx.device)  # the lr the recorded update reads, written between replays
        self._warm_up(params)
        loop.weights.zero_grad()  # None: the recording allocates the gradients it writes
        for opt in loop.opts:
            for g in opt.param_groups:
                g["capturable"] = True  # torch's check before a step inside a capture
        parts = [self._gradients, self._update] if split else [self._step]
        try:
            self._replays = [recorder(part) for part in parts]
        finally:
            for opt in loop.opts:
                for g in opt.param_groups:
                    g["capturable"] = False  # the state_dict and any eager step stay as before

    def _gradients(self) -> None:
        losses, x = self.loop.gradients(self.idx)  # gradients start at None: backward writes, not adds
        self.x, self.losses = x, losses.detach()
        self._keep_grads()

    def _update(self, count: bool = True) -> None:
        self.loop.apply()
        if count:
            self.loop.count_tokens(self.x)
        self._keep_grads()

    def _keep_grads(self) -> None:
        """Replays write the gradients where the recording put them; `replay` sets the attributes back to
        them after each part (an eager step or another shape's graph may have pointed them elsewhere)."""
        self._grads = [(p, p.grad) for p in self._params + self.loop.weights.leaves()]

    def _step(self, count: bool = True) -> None:
        """The step as recorded: the loop's own halves without the eager step's host side between them;
        the warm-up runs it without the token counts, which it does not undo."""
        self._gradients()
        self._update(count)

    def _warm_up(self, params: list[torch.Tensor]) -> None:
        """Run the step's lazy set-up (optimizer moments, library handles) and undo its update."""
        loop = self.loop
        saved = [p.detach().clone() for p in params]
        owned = [(opt, p) for opt in loop.opts for p in _params(opt)]
        states = [{k: _copy(v) for k, v in opt.state[p].items()} if p in opt.state else None for opt, p in owned]
        side = torch.cuda.Stream() if self.idx.is_cuda else None  # torch's recipe: warm up off the main stream
        if side is not None:
            side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side) if side is not None else contextlib.nullcontext(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(WARMUP_STEPS):
                self._step(count=False)
        if side is not None:
            torch.cuda.current_stream().wait_stream(side)
        with torch.no_grad():
            for p, s in zip(params, saved, strict=True):
                p.copy_(s)
            for (opt, p), before in zip(owned, states, strict=True):
                for k, v in opt.state.get(p, {}).items():
                    if not isinstance(v, torch.Tensor):
                        continue
                    if before is None:
                        v.zero_()  # the moments and the step the warm-up created: Adam's fresh state is zeros
                    else:
                        v.copy_(cast(torch.Tensor, before[k]))

    def replay(
        self, idx: torch.Tensor, between: Callable[[torch.Tensor], None] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One training step on `idx`; the step's losses (N,) and batch tokens (N, B, L). `between(x)` runs
        after the gradients and before the update (a split recording's)."""
        self.idx.copy_(idx)
        for k, part in enumerate(self._replays):
            if k and between is not None:
                between(self.x)
            part()
            for p, g in self._grads:
                p.grad = g
        return self.losses, self.x


def _params(opt: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [p for g in opt.param_groups for p in g["params"]]


def _copy(v: object) -> object:
    return v.clone() if isinstance(v, torch.Tensor) else v
