"""The recorded step (engine/cuda_graph.py): which loops may record, and the bookkeeping around a recording.

CI has no GPU, so the recording itself is `eager_recorder` here: each replay runs the recorded step
again. What that checks on the CPU is everything but the CUDA capture: the warm-up step is undone
(weights and optimizer state as before, fresh moments zero), the gradients are written and not added,
the sampler and the per-step probes see the step's gradient, a short last batch gets its own recording,
and a checkpoint taken between replays resumes as an eager run. All bit for bit: on one CPU the same
kernels in the same order give the same floats. bench/gpu_graph.py compares real replays on a GPU.
"""

from __future__ import annotations

import pytest
import torch

from engine.cuda_graph import eager_recorder, unfit
from engine.events import EvalLogged, TokensLogged
from engine.loop import TrainLoop
from engine.trainer import Trainer
from tests.conftest import tiny_config


def recorded(loop: TrainLoop) -> TrainLoop:
    loop.graph_off, loop.recorder = None, eager_recorder
    return loop


def trace(loop: TrainLoop) -> tuple[list[str], list[str], list[dict[str, torch.Tensor]]]:
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


def assert_same(a: tuple, b: tuple) -> None:
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
    ],
)
def test_recorded_steps_train_as_eager_steps(over: dict, shapes: int) -> None:
    cfg = tiny_config(**over)
    eager = trace(TrainLoop([cfg]))
    loop = recorded(TrainLoop([cfg]))
    assert_same(trace(loop), eager)
    assert len(loop.graphs) == shapes


def test_stacked_members_record_one_step() -> None:
    cfgs = [tiny_config(train__seed=s) for s in (0, 1, 2)]
    eager = trace(TrainLoop(cfgs, stacked=True))
    loop = recorded(TrainLoop(cfgs, stacked=True))
    assert_same(trace(loop), eager)
    assert loop.graphs


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
        ({"optim__warmup_steps": 10}, "an lr schedule (warm-up or cosine)"),
        ({"optim__schedule": "cosine"}, "an lr schedule (warm-up or cosine)"),
        ({"optim__adaptive": True}, "adaptive c (optim.adaptive)"),
        ({"optim__orthogonal": True}, "a gradient filter"),
        ({"optim__grokfast_lambda": 2.0}, "a gradient filter"),
    ],
)
def test_what_keeps_the_eager_step(over: dict, reason: str) -> None:
    assert unfit(TrainLoop([tiny_config(**over)])) == reason
