"""The recorded step (engine/train/gpu/cuda_graph.py): which loops may record, and the bookkeeping around a recording.

CI has no GPU, so the recording itself is `eager_recorder` here: each replay runs the recorded step
again. What that checks on the CPU is everything but the CUDA capture: the warm-up step is undone
(weights and optimizer state as before, fresh moments zero), the gradients are written and not added,
the sampler and the per-step probes see the step's gradient before the update, a short last batch gets
its own recording, a warm-up, a cosine and adaptive c reach the replay through the lr tensors, and a
checkpoint taken between replays resumes as an eager run. All bit for bit: on one CPU the same
kernels in the same order give the same floats. bench/gpu_speed.py graph compares real replays on a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest
import torch

from engine.events import EvalLogged, TokensLogged
from engine.train.gpu.cuda_graph import eager_recorder, unfit
from engine.train.loop import TrainLoop
from engine.train.trainer import Trainer
from tests.conftest import tiny_config

Loop = TypeVar("Loop", bound=TrainLoop)
Trace = tuple[list[str], list[str], list[dict[str, torch.Tensor]]]


def recorded(loop: Loop) -> Loop:
    loop.graph_off, loop.recorder = None, eager_recorder
    return loop


def trace(loop: TrainLoop) -> Trace:
    """Each member's rows and token records, as text (NaN cells compare equal), and final weights."""
    rows: list[str] = []
    tokens: list[str] = []
    for i, ev in loop._loop():
        if isinstance(ev, EvalLogged):
            rows.append(f"{i} {sorted((k, v) for k, v in ev.row.items() if k != 'wall_s')}")
        elif isinstance(ev, TokensLogged):
            tokens.append(f"{i} {ev.updates} {ev.grad_norm}")
    weights = [{k: v.detach().clone() for k, v in loop.weights.params(i).items()} for i in range(loop.N)]
    return rows, tokens, weights


def assert_same(a: Trace, b: Trace) -> None:
    assert a[0] == b[0]
    assert a[1] == b[1]
    for wa, wb in zip(a[2], b[2], strict=True):
        for k in wa:
            assert torch.equal(wa[k], wb[k]), k


@pytest.mark.parametrize(
    ("over", "shapes"),
    [
        ({}, 2),  # Adam, shuffled epochs: a full batch and a short last one (p = 11: 60 pairs, batch 16)
        ({"optim__name": "adamw", "optim__weight_decay": 0.1, "optim__lr_ratio": 10.0}, 2),
        ({"train__sampler": "gradient", "probe__grad_every": 20}, 1),  # the step's gradient after the replay
        ({"optim__weight_decay": 0.01, "train__batch_size": 0}, 1),  # full batch, coupled L2
        # the lr and c as device tensors the replay reads (engine/train/optim.py `tensor_lrs`)
        ({"optim__warmup_steps": 25}, 2),
        ({"optim__schedule": "cosine", "optim__warmup_steps": 5, "optim__lr_ratio": 10.0}, 2),
        ({"optim__adaptive": True, "optim__adaptive_every": 7}, 2),  # c at step 0 from the first batch, then every 7
        ({"optim__adaptive": True, "optim__adaptive_once": True, "optim__schedule": "cosine"}, 2),
        ({"optim__adaptive": True, "optim__adaptive_every": 10, "train__sampler": "gradient"}, 1),
    ],
)
def test_recorded_steps_train_as_eager_steps(over: dict[str, object], shapes: int) -> None:
    cfg = tiny_config(**over)
    eager = trace(TrainLoop([cfg]))
    loop = recorded(TrainLoop([cfg]))
    assert_same(trace(loop), eager)
    assert len(loop.graphs) == shapes


@pytest.mark.parametrize(
    "over",
    [
        {},
        {"optim__warmup_steps": 10, "optim__schedule": "cosine"},  # one shared optimizer, its lr scheduled
        {"optim__adaptive": True, "optim__adaptive_every": 9},  # one optimizer per member, each its own c
    ],
)
def test_stacked_members_record_one_step(over: dict[str, object]) -> None:
    cfgs = [tiny_config(train__seed=s, **over) for s in (0, 1, 2)]
    eager = trace(TrainLoop(cfgs, stacked=True))
    loop = recorded(TrainLoop(cfgs, stacked=True))
    assert_same(trace(loop), eager)
    assert loop.graphs


def test_the_recorded_lr_is_the_schedule_and_c_of_each_step() -> None:
    """The lr tensors a replay reads hold, at every step, the eager step's lr and lr·c."""
    cfg = tiny_config(optim__adaptive=True, optim__adaptive_every=7, optim__warmup_steps=12, train__batch_size=0)
    seen: dict[str, list[tuple[float, float]]] = {"eager": [], "recorded": []}
    for name, loop in (("eager", TrainLoop([cfg])), ("recorded", recorded(TrainLoop([cfg])))):
        opt = loop.opts[0]
        inner = opt.step

        def step(opt: torch.optim.Optimizer = opt, inner=inner, out=seen[name]) -> None:
            out.append(tuple(float(g["lr"]) for g in opt.param_groups))
            inner()

        opt.__dict__["step"] = step
        list(loop._loop())
        if name == "recorded":
            assert all(isinstance(g["lr"], torch.Tensor) for g in opt.param_groups)
    # one batch shape: the recording's warm-up step is the first call, undone; then one call per step
    assert seen["recorded"][1:] == seen["eager"]
    assert seen["eager"][0] == (0.0, 0.0)  # warm-up: lr·0/12 at step 0
    assert len(set(seen["eager"])) > 12  # the warm-up's rise and each new c


def test_gradients_are_observed_before_the_update() -> None:
    """The sampler and the per-step probes see the step's gradients before the optimizer uses them
    (the probe contract, engine/probes/__init__.py `on_step`), recorded or eager alike."""
    cfg = tiny_config(train__sampler="gradient", probe__grad_every=20, train__max_steps=12)
    for loop in (TrainLoop([cfg]), recorded(TrainLoop([cfg]))):
        order: list[str] = []
        opt, sampler = loop.opts[0], loop.samplers[0]
        inner_step, inner_observe = opt.step, sampler.observe

        def step(inner: Callable[[], object] = inner_step, order: list[str] = order) -> None:
            order.append("update")
            inner()

        def observe(
            x: torch.Tensor,
            grad_e: torch.Tensor,
            inner: Callable[[torch.Tensor, torch.Tensor], None] = inner_observe,
            order: list[str] = order,
        ) -> None:
            order.append("observe")
            inner(x, grad_e)

        opt.__dict__["step"] = step
        sampler.observe = observe  # type: ignore[method-assign]
        list(loop._loop())
        steps = order[-2 * 12 :]  # a recording's warm-up update comes first
        assert steps == ["observe", "update"] * 12, order


def test_a_checkpoint_holds_a_float_lr() -> None:
    """A recorded run's checkpoint is the eager run's format: each group's lr a float."""
    cfg = tiny_config(optim__warmup_steps=10)
    loop = recorded(TrainLoop([cfg]))
    list(loop._loop())
    groups = loop.member_state_dict(0)["opt"]["param_groups"]
    assert [type(g["lr"]) for g in groups] == [float, float]
    stacked = recorded(TrainLoop([tiny_config(train__seed=s, optim__warmup_steps=10) for s in (0, 1)], stacked=True))
    list(stacked._loop())
    assert [type(g["lr"]) for g in stacked.member_state_dict(1)["opt"]["param_groups"]] == [float, float]


def test_a_checkpoint_between_replays_resumes_as_an_eager_run() -> None:
    cfg = tiny_config(train__max_steps=40)
    whole = Trainer(tiny_config(train__max_steps=70))
    rows_whole = [ev.row for ev in whole if isinstance(ev, EvalLogged)]
    first = recorded(Trainer(cfg))
    list(first._loop())
    state = first.state_dict()
    rest = Trainer(tiny_config(train__max_steps=70), state=state)  # eager from here
    rows = [ev.row for ev in rest if isinstance(ev, EvalLogged)]
    assert str([{k: v for k, v in r.items() if k != "wall_s"} for r in rows]) == str(
        [{k: v for k, v in r.items() if k != "wall_s"} for r in rows_whole if r["step"] > 40]
    )


@pytest.mark.parametrize(
    ("over", "reason"),
    [
        ({}, "cpu device"),
        ({"train__cuda_graph": False}, "train.cuda_graph = false"),
        ({"optim__name": "sgd"}, "optim.name = sgd (Adam and AdamW only)"),
        ({"optim__warmup_steps": 10}, "cpu device"),  # recordable: the lr is a device tensor
        ({"optim__schedule": "cosine"}, "cpu device"),
        ({"optim__adaptive": True}, "cpu device"),
        ({"optim__orthogonal": True}, "a gradient filter"),
        ({"optim__grokfast_lambda": 2.0}, "a gradient filter"),
    ],
)
def test_what_keeps_the_eager_step(over: dict[str, object], reason: str) -> None:
    assert unfit(TrainLoop([tiny_config(**over)])) == reason
