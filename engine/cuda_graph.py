"""The training step as CUDA graphs: a launch-bound step replayed with one launch.

At p = 97 a step is about 60 small kernels and 0.6 ms of GPU work, and the host's launches of them
set its pace (docs/PERFORMANCE.md, the GPU runs). A `torch.cuda.CUDAGraph` records the step once —
the batch gather from the sampler's indices, forward, backward, the optimizers' fused updates and the
token counts — and each later step copies the new indices into the graph's input and replays it.

What a recording needs, and how the trajectory stays the eager one:
- Fixed step arguments: the lr is a number baked into the fused Adam kernel, so a schedule (warm-up,
  cosine) or adaptive c (Prop. 4.1, recomputed during the run) keeps the eager step; so do gradient
  filters (they hold state between steps) and SGD (its first step differs from the rest).
- Warm-up before capture (lazy state: the optimizer's moments, the BLAS handles): one step is run on a
  side stream and then undone — parameters copied back and optimizer state restored, moments that the
  warm-up created set to zero, which is Adam's fresh state — so the run goes on from the same weights.
- Gradients allocated inside the recording: they start at None, so replay writes them, not adds to them.
- One graph per batch shape (the last batch of a shuffled epoch is shorter): at most `MAX_GRAPHS`, and
  any other shape takes the eager step.

Replays run the eager step's kernels in its order: on an H200 the first 20 steps of random_mul and
adamlr_mul were equal bit for bit (bench/gpu_graph.py; docs/PERFORMANCE.md). On the CPU the same warm-up,
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
from engine.optim import scheduled
from engine.weights import Weights

MAX_GRAPHS = 2  # the full batch and an epoch's short last batch
WARMUP_STEPS = 1

Recorded = Callable[[], None]
Recorder = Callable[[Callable[[], None]], Recorded]


class StepLoop(Protocol):
    """What a recording reads of the training loop (engine/loop.py)."""

    cfgs: list[RunConfig]
    device: torch.device
    weights: Weights
    opts: list[torch.optim.Optimizer]

    def update(
        self, idx: torch.Tensor, before_update: Callable[[torch.Tensor], None] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]: ...

    def count_tokens(self, x: torch.Tensor) -> None: ...


def unfit(loop: StepLoop) -> str | None:
    """Why this loop's step cannot be recorded (None: it can), in words for summary.json."""
    c = loop.cfgs[0]
    if not c.train.cuda_graph:
        return "train.cuda_graph = false"
    if any(cfg.optim.name not in ("adam", "adamw") for cfg in loop.cfgs):
        return f"optim.name = {c.optim.name} (Adam and AdamW only)"
    if any(scheduled(cfg) for cfg in loop.cfgs):
        return "an lr schedule (warm-up or cosine)"
    if any(cfg.optim.adaptive for cfg in loop.cfgs):
        return "adaptive c (optim.adaptive)"
    if loop.weights.grad_hooks:
        return "a gradient filter"
    if loop.device.type != "cuda":
        return f"{loop.device.type} device"
    return None


def cuda_recorder(step: Callable[[], None]) -> Recorded:
    """Record `step` into a CUDA graph (nothing runs now) and return its replay."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):  # torch's whole-step recipe (CUDA graphs, "whole network capture")
        step()
    return graph.replay


def eager_recorder(step: Callable[[], None]) -> Recorded:
    """The bookkeeping of a recording without the GPU: each replay runs `step` again (tests on the CPU)."""
    return step


class StepGraph:
    """One batch shape's recorded step: `replay(idx)` trains one step on the rows `idx` (N, B)."""

    def __init__(self, loop: StepLoop, idx: torch.Tensor, recorder: Recorder) -> None:
        self.loop = loop
        self.idx = idx.clone()  # the recording's input: each replay copies the step's indices here
        self.x = self.losses = idx  # the recording's outputs, set by `_step`: batch tokens, losses (N,)
        self._params = params = [p for opt in loop.opts for p in _params(opt)]
        self._grads: list[tuple[torch.Tensor, torch.Tensor | None]] = []
        self._warm_up(params)
        loop.weights.zero_grad()  # None: the recording allocates the gradients it writes
        for opt in loop.opts:
            for g in opt.param_groups:
                g["capturable"] = True  # torch's check before a step inside a capture
        try:
            self._replay = recorder(self._step)
        finally:
            for opt in loop.opts:
                for g in opt.param_groups:
                    g["capturable"] = False  # the state_dict and any eager step stay as before

    def _step(self, count: bool = True) -> None:
        """The step as recorded: the loop's own `update` without the eager step's host side; the warm-up
        runs it without the token counts, which it does not undo."""
        loop = self.loop
        losses, x = loop.update(self.idx)  # gradients start at None: backward writes them, not adds to them
        self.x, self.losses = x, losses.detach()
        # Replays write the gradients where the recording put them; the attributes are set back to them
        # after each replay (an eager step or another shape's graph may have pointed them elsewhere).
        self._grads = [(p, p.grad) for p in self._params + loop.weights.leaves()]
        if count:
            loop.count_tokens(x)

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

    def replay(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One training step on `idx`; the step's losses (N,) and batch tokens (N, B, L)."""
        self.idx.copy_(idx)
        self._replay()
        for p, g in self._grads:
            p.grad = g
        return self.losses, self.x


def _params(opt: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [p for g in opt.param_groups for p in g["params"]]


def _copy(v: object) -> object:
    return v.clone() if isinstance(v, torch.Tensor) else v
