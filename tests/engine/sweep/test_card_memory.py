"""Sweep batches sized to the card (engine/sweep/card_memory.py): the arithmetic on bytes, the estimate
against a real model's tensors on the CPU, and `plan` on a pretend card."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.nn import functional as F

import engine.sweep.batched
from engine.config import RunConfig
from engine.models import build_model
from engine.sweep import card_memory
from engine.sweep.batched import plan
from engine.sweep.card_memory import (
    CPU_MEMBERS,
    MAX_MEMBERS,
    MEMORY_FRACTION,
    batch_bytes,
    member_bytes,
    members_per_batch,
    members_that_fit,
)
from engine.sweep.member import MemberSpec
from engine.task.data import labels, make_split, operand_pairs, tokens
from tests.conftest import tiny_config

GIB = 2**30
MIB = 2**20


def test_a_bigger_card_holds_more_members_up_to_the_cap() -> None:
    member = 64 * MIB
    small, big = members_that_fit(member, 16 * GIB), members_that_fit(member, 40 * GIB)
    assert small == int(MEMORY_FRACTION * 16 * GIB // member) == 128 and big == MAX_MEMBERS  # 40 GiB: capped
    assert members_that_fit(member, 8 * GIB) == 64 < small
    assert members_that_fit(1, 10**15) == MAX_MEMBERS  # the cap holds whatever the card
    assert members_that_fit(1, 10**15, cap=500) == 500
    assert members_that_fit(member, 8 * GIB, sharing=4) == 16  # four batches at once share the card
    assert members_that_fit(member, 8 * GIB, overhead=2 * GIB) == 32  # the batch's own bytes come off first
    assert members_that_fit(member, MIB) == 1  # too small a card: members train alone


def paper_config() -> RunConfig:
    """The paper's MLP (§5): d = 128, hidden 4d = 512, p = 97, batch 512, Adam; the defaults."""
    cfg = RunConfig()
    assert (cfg.model.d_embed, cfg.d_hidden, cfg.data.p, cfg.train.batch_size) == (128, 512, 97, 512)
    assert cfg.optim.name == "adam" and cfg.model.kind == "mlp_embed"
    return cfg


def test_the_paper_mlp_estimate_against_its_real_tensors() -> None:
    """A real model and torch Adam on the CPU, one step on a real batch: the parameters, gradients and Adam's
    moments are what the estimate counts (to 1%), the tensors saved for backward are what it counts on the
    meta device (to 1%), and its total is between 1 and 2 times those measured bytes (it adds the gradients
    of the activations, a bound, and the member's data)."""
    cfg = paper_config()
    est = member_bytes(cfg)
    torch.manual_seed(0)
    model = build_model(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    pairs = operand_pairs(cfg.data)[make_split(cfg.data, 0).train[:512]]
    x, y = torch.as_tensor(tokens(cfg.data, pairs)), torch.as_tensor(labels(cfg.data, pairs))
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved[t.data_ptr()] = max(saved.get(t.data_ptr(), 0), t.numel() * t.element_size())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    grads = sum(p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None)
    moments = sum(t.numel() * t.element_size() for s in opt.state.values() for t in s.values() if t.dim() > 0)
    measured = params + grads + moments + sum(saved.values())
    assert est.params + est.grads + est.optimizer == pytest.approx(params + grads + moments, rel=0.01)
    assert est.activations / card_memory.ACTIVATION_FACTOR == pytest.approx(sum(saved.values()), rel=0.01)
    assert 1.0 <= est.total / measured <= 2.0, (est, measured)


def test_the_optimizer_state_follows_the_optimizer() -> None:
    adam, sgd = member_bytes(tiny_config()), member_bytes(tiny_config(optim__name="sgd"))
    assert adam.optimizer == 2 * adam.params and sgd.optimizer == sgd.params
    assert member_bytes(tiny_config(optim__name="sgd", optim__momentum=0.0)).optimizer == 0
    full = member_bytes(tiny_config(train__batch_size=0))  # the whole training set per step
    assert full.activations > adam.activations


def test_the_progress_probe_costs_the_batch_not_the_member() -> None:
    off, on = RunConfig(), paper_config()
    from engine.config import apply_overrides

    on = apply_overrides(on, {"probe.progress_every": "200"})
    assert member_bytes(on) == member_bytes(off)
    assert batch_bytes(on) - batch_bytes(off) == card_memory.PROGRESS_TABLES * 8 * 96 * 96 * 97  # n = 96 on mul


def test_paper_mlp_on_cards() -> None:
    cfg = paper_config()
    assert members_per_batch(cfg, free=80 * GIB) == MAX_MEMBERS
    assert members_per_batch(cfg, free=80 * GIB, sharing=64) < MAX_MEMBERS
    assert members_per_batch(cfg, free=1 * GIB) < members_per_batch(cfg, free=4 * GIB)


def specs_of(tmp_path: Path, n: int, device: str = "cpu") -> list[MemberSpec]:
    return [
        MemberSpec(f"m{s:03d}", tiny_config(train__seed=s, train__device=device), str(tmp_path / f"m{s:03d}"))
        for s in range(n)
    ]


def test_plan_sizes_batches_to_a_pretend_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`plan` asks the card for its free bytes and fills each batch to what fits; off a card it keeps
    CPU_MEMBERS; an explicit max_members wins."""
    specs = specs_of(tmp_path, 10, "cuda")
    one = member_bytes(specs[0].config).total
    extra = batch_bytes(specs[0].config)
    free = int((3 * one + extra) / MEMORY_FRACTION) + 1  # room for exactly 3 members
    monkeypatch.setattr(engine.sweep.batched, "free_bytes", lambda device: free)
    assert [len(b) for b in plan(specs)] == [3, 3, 3, 1]
    assert [len(b) for b in plan(specs, workers=3)] == [1] * 10  # three batches at once: one member each
    assert [len(b) for b in plan(specs, max_members=5)] == [5, 5]
    monkeypatch.setattr(engine.sweep.batched, "free_bytes", lambda device: 10**15)
    assert [len(b) for b in plan(specs_of(tmp_path, 300, "cuda"))] == [MAX_MEMBERS, MAX_MEMBERS, 300 - 2 * MAX_MEMBERS]


def test_plan_on_the_cpu_keeps_its_fixed_size(tmp_path: Path) -> None:
    specs = specs_of(tmp_path, 40)
    assert [len(b) for b in plan(specs, stack=True)] == [CPU_MEMBERS, 40 - CPU_MEMBERS]
    assert plan(specs) == [[s] for s in specs]  # not asked to stack: one by one


@pytest.mark.skipif(torch.cuda.device_count() > 7, reason="this machine has a cuda:7")
def test_plan_for_a_card_that_is_not_there(tmp_path: Path) -> None:
    """A member on a card this machine lacks is planned at the fixed size; its worker reports the error
    (tests/engine/sweep/test_pool.py), the planner does not."""
    specs = specs_of(tmp_path, 40, "cuda:7")
    assert [len(b) for b in plan(specs)] == [CPU_MEMBERS, 40 - CPU_MEMBERS]
