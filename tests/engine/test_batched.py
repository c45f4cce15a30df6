"""train_many: each member of a batched model trains as it would alone with the same seed."""

from __future__ import annotations

import math
from typing import Any

import pytest

from engine.config import RunConfig
from engine.events import EvalLogged, RunFinished, TokensLogged
from engine.train.many import train_many, why_not_batched
from engine.train.trainer import Trainer
from tests.conftest import tiny_config

METRICS = ("train_loss", "train_acc", "val_loss", "val_acc")


Rows = list[dict[str, float]]
Tokens = list[tuple[int, ...]]


def alone(cfg: RunConfig) -> tuple[Rows, Tokens, dict[str, Any]]:
    rows: Rows = []
    tokens: Tokens = []
    summary: dict[str, Any] = {}
    for ev in Trainer(cfg):
        if isinstance(ev, EvalLogged):
            rows.append(ev.row)
        elif isinstance(ev, TokensLogged):
            tokens.append(ev.updates)
        elif isinstance(ev, RunFinished):
            summary = ev.summary.doc()
    return rows, tokens, summary


def batched(cfgs: list[RunConfig]) -> tuple[list[Rows], list[Tokens], list[dict[str, Any]]]:
    rows: list[Rows] = [[] for _ in cfgs]
    tokens: list[Tokens] = [[] for _ in cfgs]
    summaries: list[dict[str, Any]] = [{} for _ in cfgs]
    for i, ev in train_many(cfgs):
        if isinstance(ev, EvalLogged):
            rows[i].append(ev.row)
        elif isinstance(ev, TokensLogged):
            tokens[i].append(ev.updates)
        elif isinstance(ev, RunFinished):
            summaries[i] = ev.summary.doc()
    return rows, tokens, summaries


def assert_same(solo: tuple[Rows, Tokens, dict[str, Any]], many: tuple[Rows, Tokens, dict[str, Any]]) -> None:
    rows, tokens, summary = solo
    mrows, mtokens, msummary = many
    assert [r["step"] for r in mrows] == [r["step"] for r in rows]
    for r, m in zip(rows, mrows, strict=True):
        for k in METRICS:
            assert math.isclose(m[k], r[k], rel_tol=1e-4, abs_tol=1e-5), (r["step"], k, m[k], r[k])
        assert m["lr_embed"] == r["lr_embed"] or (math.isnan(m["lr_embed"]) and math.isnan(r["lr_embed"]))
    assert mtokens == tokens  # the same batches, in the same order
    assert msummary["status"] == summary["status"]
    assert msummary["steps"] == summary["steps"]


@pytest.mark.parametrize("optim", ["adam", "adamw", "sgd"])
def test_members_match_solo_runs(optim):
    over = {"optim__name": optim, "train__max_steps": 40}
    if optim == "sgd":
        over["optim__lr"] = 0.05
    cfgs = [
        tiny_config(train__seed=0, **over),
        tiny_config(train__seed=1, optim__lr_ratio=10.0, **over),
        tiny_config(train__seed=2, optim__weight_decay=0.1, data__op="mul", **over),
    ]
    many = batched(cfgs)
    for i, cfg in enumerate(cfgs):
        assert_same(alone(cfg), (many[0][i], many[1][i], many[2][i]))


def test_members_differ_from_each_other():
    cfgs = [tiny_config(train__seed=s, train__max_steps=20) for s in (0, 1)]
    rows, _, _ = batched(cfgs)
    assert rows[0][-1]["train_loss"] != rows[1][-1]["train_loss"]


def test_raw_mlp_and_full_batch():
    cfgs = [tiny_config(model__kind="mlp_raw", train__batch_size=0, train__seed=s, train__max_steps=20) for s in (0, 3)]
    many = batched(cfgs)
    for i, cfg in enumerate(cfgs):
        assert_same(alone(cfg), (many[0][i], many[1][i], many[2][i]))


def test_early_stop_per_member():
    # target 0 stops a member at its first evaluation after `patience` rows; the other runs on.
    cfgs = [tiny_config(train__seed=0, train__patience=2, train__target_val_acc=0.0), tiny_config(train__seed=1)]
    many = batched(cfgs)
    for i, cfg in enumerate(cfgs):
        assert_same(alone(cfg), (many[0][i], many[1][i], many[2][i]))
    assert many[2][0]["steps"] < many[2][1]["steps"]


def reason(cfgs: list[RunConfig]) -> str:
    """Why these configs cannot share a batched model (they must not)."""
    why = why_not_batched(cfgs)
    assert why is not None
    return why


def test_why_not_batched() -> None:
    assert why_not_batched([tiny_config(), tiny_config(train__seed=1, optim__lr=3e-3)]) is None
    assert "model.d_embed" in reason([tiny_config(), tiny_config(model__d_embed=16)])
    assert why_not_batched([tiny_config(train__sampler="balanced", probe__rank_every=10)]) is None
    assert "gradient filters" in reason([tiny_config(optim__orthogonal=True)])
    assert "transformer" in reason([tiny_config(model__kind="transformer")])
    # div has p(p-1) pairs: it never shares a model with the other ops, whichever comes first (a CUDA
    # sweep of fig6_optimizers put add, sub, mul and div in one batch when add came first)
    for ops in (("add", "div"), ("div", "add"), ("mul", "sub", "div")):
        assert "differ in size" in reason([tiny_config(data__op=op) for op in ops])
    assert why_not_batched([tiny_config(data__op=op) for op in ("add", "sub", "mul")]) is None
    # weighted shuffled epochs: each seed's epoch, and its last partial batch, has its own length, which the
    # stack pads and masks (tests/engine/test_batched_stacks.py)
    uneven = ({"train__sampler": "balanced_epochs"}, {"data__starve_k": 2, "train__target_rate": 0.01})
    for over in uneven:
        assert why_not_batched([tiny_config(train__seed=s, **over) for s in (0, 1)]) is None
    assert why_not_batched([tiny_config(data__starve_k=2, train__seed=s) for s in (0, 1)]) is None
    with pytest.raises(ValueError, match="d_embed"):
        next(train_many([tiny_config(), tiny_config(model__d_embed=16)]))
