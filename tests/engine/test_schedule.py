"""optim.warmup_steps and optim.schedule: the lr in force at each step, in the optimizer and in the log."""

from __future__ import annotations

import math

import pytest
import torch

from engine.config import ConfigError
from engine.events import EvalLogged
from engine.train.optim import lr_at
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def test_warmup_matches_torch_lambdalr() -> None:
    """Grokking-Insight's LambdaLR(lambda step: min(step / 10, 1)) gives the same lr at every step."""
    cfg = tiny_config(optim__warmup_steps=10, optim__lr=1e-3)
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(step / 10, 1))
    for t in range(25):
        assert lr_at(cfg, t) == pytest.approx(opt.param_groups[0]["lr"], rel=1e-12, abs=0), t
        opt.step()
        sched.step()


def test_cosine_after_warmup() -> None:
    cfg = tiny_config(optim__warmup_steps=10, optim__schedule="cosine", optim__lr=0.1, train__max_steps=110)
    assert lr_at(cfg, 0) == 0 and lr_at(cfg, 5) == pytest.approx(0.05)
    assert lr_at(cfg, 10) == pytest.approx(0.1) and lr_at(cfg, 60) == pytest.approx(0.05)
    assert lr_at(cfg, 35) == pytest.approx(0.1 * 0.5 * (1 + math.cos(math.pi / 4)))
    assert lr_at(cfg, 110) == pytest.approx(0.0, abs=1e-15)
    constant = tiny_config(optim__lr=0.1)
    assert {lr_at(constant, t) for t in (0, 7, 60)} == {0.1}


def test_trainer_applies_and_logs_the_scheduled_lr() -> None:
    cfg = tiny_config(optim__warmup_steps=20, optim__schedule="cosine", optim__lr_ratio=10.0, train__max_steps=60)
    tr = Trainer(cfg)
    init = {n: p.detach().clone() for n, p in tr.model.named_parameters()}
    rows = [ev.row for ev in tr if isinstance(ev, EvalLogged)]
    for r in rows:  # the lr and lr_embed columns carry the lr in force, lr_embed = c·lr
        assert r["lr"] == pytest.approx(lr_at(cfg, int(r["step"])))
        assert r["lr_embed"] == pytest.approx(10.0 * lr_at(cfg, int(r["step"])))
    assert [r["lr"] for r in rows][:2] == [0.0, pytest.approx(cfg.optim.lr)]
    # the groups hold the last step's lr (step 59 of the cosine), not the configured one
    last = lr_at(cfg, 59)
    assert tr.opt.param_groups[1]["lr"] == pytest.approx(last) and tr.opt.param_groups[0]["lr"] == pytest.approx(
        10 * last
    )
    assert any(not torch.equal(init[n], p) for n, p in tr.model.named_parameters())


def test_first_warmup_step_has_lr_zero() -> None:
    """Step 0 of a warm-up runs at lr 0: with AdamW the weights do not move (decay is lr·wd too)."""
    cfg = tiny_config(optim__name="adamw", optim__warmup_steps=10, train__max_steps=1, train__eval_every=1)
    tr = Trainer(cfg)
    init = {n: p.detach().clone() for n, p in tr.model.named_parameters()}
    list(tr)
    assert tr.step == 1
    for n, p in tr.model.named_parameters():
        assert torch.equal(init[n], p), n


def test_bad_schedule_values() -> None:
    with pytest.raises(ConfigError, match=r"optim\.schedule: must be one of constant, cosine"):
        tiny_config(optim__schedule="linear")
    with pytest.raises(ConfigError, match=r"optim\.warmup_steps: must be >= 0"):
        tiny_config(optim__warmup_steps=-1)
