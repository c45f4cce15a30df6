"""Adaptive Adam-LR (Prop. 4.1, eq. 24): c from step 0, σmax(E) over the operand rows, f_E over the
tokens present in training, the clamp logged, and the two readings (c once, c recomputed)."""

from __future__ import annotations

import math

import pytest
import torch

from engine.config import OptimConfig
from engine.events import EvalLogged, RunFinished
from engine.models import build_model
from engine.train.adaptive import adaptive_ratio, f_e_of_batch, f_e_of_counts, sigma_e
from engine.train.trainer import Trainer
from tests.conftest import tiny_config

# p = 11 with 3 tokens starved to no training pair: a full batch holds exactly the 8 present operand tokens
STARVED = {"data__p": 11, "data__starve_k": 3, "data__starve_m": 0, "train__batch_size": 0}
WIDE = {"optim__ratio_max": 1000.0, "optim__ratio_min": 0.01}


def test_sigma_e_reads_the_operand_rows_only() -> None:
    """A hand-built E: operand rows with σmax = 3, and op / '=' rows 100 times larger."""
    p, d = 5, 4
    E = torch.zeros(p + 2, d, dtype=torch.float64)
    E[:p, : p - 1] = torch.eye(p, p - 1, dtype=torch.float64) * torch.tensor([3.0, 2.0, 1.0, 0.5], dtype=torch.float64)
    E[p:] = 100.0
    assert sigma_e(E, p) == pytest.approx(3.0)
    assert float(torch.linalg.svdvals(E)[0]) > 100  # what counting the op and '=' rows would have given


def test_adaptive_ratio_uses_sigma_of_the_operand_rows() -> None:
    cfg = tiny_config(**WIDE)
    model = build_model(cfg)
    p = cfg.data.p
    with torch.no_grad():
        model.get_parameter("embedding.weight")[p:] = 1e3  # op and '=' rows: they would dominate σmax(E)
    r = adaptive_ratio(model, cfg, f_e=0.5)
    s_w = float(torch.linalg.svdvals(model.get_parameter("first_layer.weight").detach().double())[0])
    s_e = float(torch.linalg.svdvals(model.get_parameter("embedding.weight").detach()[:p].double())[0])
    assert [r.s_e, r.s_w] == pytest.approx([s_e, s_w])
    assert r.raw == pytest.approx(cfg.optim.kappa * s_e / s_w / 0.5) and r.c == r.raw and not r.clamped


def test_f_e_counts_present_tokens_only() -> None:
    """p = 5, token 2 has no training pair: a batch holding 0, 1 (and op, '=') covers 2 of the 4 present."""
    present = torch.tensor([True, True, False, True, True])
    batch = torch.tensor([[0, 5, 1, 6], [1, 5, 0, 6]])
    assert f_e_of_batch(batch, present) == 2 / 4
    assert f_e_of_batch(torch.tensor([[0, 5, 1, 6], [3, 5, 4, 6]]), present) == 1.0
    # 10 steps, Σ over tokens of the steps holding them = 30: each present token in 30/40 of the token-steps
    assert f_e_of_counts(30, 10, present) == 30 / 40


def test_f_e_leaves_absent_tokens_out() -> None:
    cfg = tiny_config(**STARVED, optim__adaptive=True, optim__adaptive_every=5, train__max_steps=10)
    rows = [e.row for e in Trainer(cfg) if isinstance(e, EvalLogged)]
    assert rows[-1]["f_E"] == 1.0  # the full batch holds every present token; /p would have given 8/11


def test_c_is_set_at_step_zero() -> None:
    """With adaptive_every past the run's end, c still moves off lr_ratio: it was computed at step 0."""
    over = {"optim__adaptive": True, "optim__adaptive_every": 1000, **WIDE}
    cfg = tiny_config(**STARVED, **over, train__max_steps=10)
    tr = Trainer(cfg)
    rows = [e.row for e in tr if isinstance(e, EvalLogged)]
    assert rows[-1]["f_E"] == 1.0
    assert rows[-1]["lr_ratio"] != 1.0 and rows[-1]["c_raw"] == rows[-1]["lr_ratio"]
    assert tr.opt.param_groups[0]["lr"] == pytest.approx(cfg.optim.lr * rows[-1]["lr_ratio"])


def test_once_keeps_the_step_zero_c_and_every_recomputes_it() -> None:
    base = {"optim__adaptive": True, "optim__adaptive_every": 10, "train__max_steps": 60, **WIDE}
    once = [e.row for e in Trainer(tiny_config(**base, optim__adaptive_once=True)) if isinstance(e, EvalLogged)]
    every = [e.row for e in Trainer(tiny_config(**base)) if isinstance(e, EvalLogged)]
    only_step0 = [
        e.row for e in Trainer(tiny_config(**{**base, "optim__adaptive_every": 1000})) if isinstance(e, EvalLogged)
    ]
    assert [r["lr_ratio"] for r in once] == [r["lr_ratio"] for r in only_step0]  # the step-0 c, kept
    assert len({r["lr_ratio"] for r in once[1:]}) == 1 and once[1]["lr_ratio"] != 1.0
    assert len({r["lr_ratio"] for r in every[1:]}) > 1  # recomputed: c moves


def test_clamp_is_logged_where_it_binds() -> None:
    """ratio_min above the formula's value: c sits on the floor, c_raw keeps the formula, c_clamped counts."""
    cfg = tiny_config(optim__adaptive=True, optim__adaptive_every=10, optim__ratio_min=500.0, optim__ratio_max=1000.0)
    evs = list(Trainer(cfg))
    rows = [e.row for e in evs if isinstance(e, EvalLogged)]
    summary = next(e for e in evs if isinstance(e, RunFinished)).summary.doc()
    assert rows[-1]["lr_ratio"] == 500.0 and rows[-1]["c_raw"] < 500.0
    assert summary["c_clamped"] == 1 + cfg.train.max_steps // 10  # step 0, then every 10 steps


def test_unclamped_run_reports_no_clamp() -> None:
    cfg = tiny_config(optim__adaptive=True, optim__adaptive_every=10, **WIDE)
    evs = list(Trainer(cfg))
    summary = next(e for e in evs if isinstance(e, RunFinished)).summary.doc()
    assert summary["c_clamped"] == 0
    rows = [e.row for e in evs if isinstance(e, EvalLogged)]
    assert all(math.isfinite(r["c_raw"]) for r in rows)


def test_default_floor_is_not_plain_adam() -> None:
    """The default clamp must let c fall below 1: at 1 the recomputed c sat there, making the arm plain Adam."""
    assert OptimConfig().ratio_min < 1.0
