"""The training loop: determinism, control from another thread, early stop, divergence, options."""

from __future__ import annotations

import threading

import pytest
import torch

from engine.config import RunConfig
from engine.events import EvalLogged, RunFinished, RunStarted, StatusChanged, TokensLogged
from engine.train.trainer import Trainer
from tests.conftest import tiny_config

TRAIN_KEYS = ("train_loss", "train_acc", "val_loss", "val_acc", "lr_ratio")


def rows(cfg: RunConfig) -> list[dict[str, float]]:
    return [ev.row for ev in Trainer(cfg) if isinstance(ev, EvalLogged)]


def strip_wall(rs: list[dict[str, float]]) -> list[dict[str, float | None]]:
    """Rows without wall time, NaN as None so that equal rows compare equal."""
    return [{k: (None if v != v else v) for k, v in r.items() if k != "wall_s"} for r in rs]


def test_same_seed_same_metrics() -> None:
    a, b = rows(tiny_config()), rows(tiny_config())
    assert strip_wall(a) == strip_wall(b)
    c = rows(tiny_config(train__seed=1))
    assert strip_wall(a) != strip_wall(c)


def test_event_stream_shape() -> None:
    evs = list(Trainer(tiny_config()))
    assert isinstance(evs[0], RunStarted) and isinstance(evs[-1], RunFinished)
    evals = [e for e in evs if isinstance(e, EvalLogged)]
    assert [e.step for e in evals] == [0, 20, 40, 60]
    assert evs[-1].status == "finished" and evs[-1].summary.steps == 60
    assert set(evs[0].columns) <= set(evals[0].row)


def test_update_counts_count_steps_that_include_the_token() -> None:
    cfg = tiny_config(train__batch_size=0, train__max_steps=7, train__eval_every=7)
    toks = [e for e in Trainer(cfg) if isinstance(e, TokensLogged)]
    final = toks[-1].updates
    # full batch: every token of the training set is in every one of the 7 steps; op and '=' always
    assert final[11] == 7 and final[12] == 7
    assert max(final) == 7


def test_pause_resume_stop_from_another_thread() -> None:
    tr = Trainer(tiny_config(train__max_steps=100_000, train__eval_every=50))
    seen: list[str] = []

    def control() -> None:
        tr.pause()

    it = iter(tr)
    for ev in it:
        if isinstance(ev, EvalLogged) and ev.step == 50:
            threading.Thread(target=control).start()
        if isinstance(ev, StatusChanged):
            seen.append(ev.status)
            if ev.status == "paused":
                step = tr.step
                threading.Timer(0.2, lambda: tr.unpause()).start()
            else:
                assert tr.step == step  # no training while paused
                tr.stop("interrupted")
        if isinstance(ev, RunFinished):
            assert ev.status == "interrupted"
            assert ev.summary.steps is not None and ev.summary.steps < 100_000
    assert seen == ["paused", "running"]


def test_early_stop_on_target() -> None:
    cfg = tiny_config(
        data__op="add", train__max_steps=5000, train__eval_every=10, train__target_val_acc=0.0, train__patience=3
    )
    fin = next(e for e in Trainer(cfg) if isinstance(e, RunFinished))
    assert fin.status == "finished" and fin.summary.steps == 20  # evals at 0, 10, 20 all meet target 0


def test_divergence_with_sgd_at_huge_lr() -> None:
    cfg = tiny_config(optim__name="sgd", optim__lr=1e6, train__max_steps=200)
    evs = list(Trainer(cfg))
    assert isinstance(evs[-1], RunFinished)
    assert evs[-1].status == "diverged"
    assert evs[-1].summary.steps is not None and evs[-1].summary.steps < 200


def test_frozen_embedding_stays_fixed() -> None:
    tr = Trainer(tiny_config(model__freeze_embedding=True))
    e0 = tr.model.get_parameter("embedding.weight").detach().clone()
    list(tr)
    assert torch.equal(e0, tr.model.get_parameter("embedding.weight"))


def test_embed_init_scale() -> None:
    big = float(Trainer(tiny_config()).model.get_parameter("embedding.weight").detach().std())
    small = float(
        Trainer(tiny_config(model__embed_init_scale=0.1)).model.get_parameter("embedding.weight").detach().std()
    )
    assert small == pytest.approx(big * 0.1, rel=1e-5)


def test_adam_lr_sets_embedding_group() -> None:
    tr = Trainer(tiny_config(optim__lr=0.01, optim__lr_ratio=10.0))
    assert tr.opt.param_groups[0]["lr"] == pytest.approx(0.1) and tr.opt.param_groups[1]["lr"] == 0.01
    assert tr.opt.param_groups[0]["params"][0] is tr.model.get_parameter("embedding.weight")
    row = [e.row for e in tr if isinstance(e, EvalLogged)][-1]
    assert row["lr_embed"] == pytest.approx(0.1) and row["lr_ratio"] == 10.0


def test_adaptive_ratio_is_recomputed_and_logged() -> None:
    cfg = tiny_config(optim__adaptive=True, optim__adaptive_every=10, optim__ratio_max=1000.0, optim__ratio_min=0.01)
    tr = Trainer(cfg)
    rs = [e.row for e in tr if isinstance(e, EvalLogged)]
    assert rs[0]["lr_ratio"] == 1.0
    assert rs[-1]["lr_ratio"] != 1.0 and 0 < rs[-1]["f_E"] <= 1
    assert tr.opt.param_groups[0]["lr"] == pytest.approx(cfg.optim.lr * rs[-1]["lr_ratio"])


@pytest.mark.parametrize(
    "over",
    [
        {"model__kind": "mlp_raw"},
        {"model__n_hidden": 2, "model__activation": "gelu"},
        {"data__op_token": False},
        {"train__batch_size": 0, "optim__name": "adamw", "optim__betas": (0.9, 0.98), "optim__weight_decay": 1.0},
        {"train__dtype": "float64"},
        {"optim__name": "sgd", "optim__lr": 0.1},
        {"train__sampler": "balanced"},
        {"train__sampler": "gradient", "train__gamma": 0.5},
        {"data__split": "uniform"},
        {"data__split": "skewed"},
        {"data__op": "div"},
    ],
)
def test_variants_train(over: dict[str, object]) -> None:
    evs = list(Trainer(tiny_config(**over)))
    assert isinstance(evs[-1], RunFinished)
    assert evs[-1].status == "finished"
    rs = [e.row for e in evs if isinstance(e, EvalLogged)]
    assert rs[-1]["train_loss"] < rs[0]["train_loss"]


def test_float64_model_dtype() -> None:
    tr = Trainer(tiny_config(train__dtype="float64"))
    assert tr.model.get_parameter("first_layer.weight").dtype == torch.float64
