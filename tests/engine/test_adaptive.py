"""Adaptive Adam-LR (Prop. 4.1, eq. 24): c from step 0, f_E over the operand tokens' rows only."""

from __future__ import annotations

import pytest

from engine.events import EvalLogged
from engine.trainer import Trainer
from tests.conftest import tiny_config

# p = 11 with 3 tokens starved to no training pair: a full batch holds exactly 8 of the 11 operand tokens
STARVED = {"data__p": 11, "data__starve_k": 3, "data__starve_m": 0, "train__batch_size": 0}


def test_f_e_counts_operand_tokens_only() -> None:
    cfg = tiny_config(**STARVED, optim__adaptive=True, optim__adaptive_every=5, train__max_steps=10)
    rows = [e.row for e in Trainer(cfg) if isinstance(e, EvalLogged)]
    assert rows[-1]["f_E"] == 8 / 11  # op and '=' (in every batch) would have made it 10/13


def test_c_is_set_at_step_zero() -> None:
    """With adaptive_every past the run's end, c still moves off lr_ratio: it was computed at step 0."""
    over = {"optim__adaptive": True, "optim__adaptive_every": 1000, "optim__ratio_max": 1000.0}
    cfg = tiny_config(**STARVED, **over, optim__ratio_min=0.01, train__max_steps=10)
    tr = Trainer(cfg)
    rows = [e.row for e in tr if isinstance(e, EvalLogged)]
    assert rows[-1]["f_E"] == 8 / 11
    assert rows[-1]["lr_ratio"] != 1.0
    assert tr.opt.param_groups[0]["lr"] == pytest.approx(cfg.optim.lr * rows[-1]["lr_ratio"])
