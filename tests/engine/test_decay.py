"""Decay per parameter set and lazy rows (engine/train/decay.py): a row not drawn stays bit-identical under
lazy rows, moments included; a decay-free set's step equals the one computed by hand."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from engine.config import ConfigError
from engine.probes.masks import decay_masks
from engine.task.metrics import split_tokens
from engine.train.loop import TrainLoop
from tests.conftest import tiny_config

E = "embedding.weight"
TOL = 1e-6  # relative, float32 arithmetic done two ways


def _cfg(**over: Any) -> Any:
    return tiny_config(train__threads=1, **over)


def _batch_without(loop: TrainLoop, token: int, member: int = 0) -> torch.Tensor:
    """Row indices (N, B) of training examples, member `member`'s none holding `token` (the rest: any)."""
    n = loop.xs_train.shape[1]
    rows = []
    for i in range(loop.N):
        x = loop.xs_train[i]
        ok = torch.nonzero(~(x == token).any(1)).flatten() if i == member else torch.arange(n)
        rows.append(ok[:16])
    return torch.stack(rows) + loop._offset


def _state(loop: TrainLoop, member: int = 0) -> dict[str, torch.Tensor]:
    """Member `member`'s E and its optimizer state for E, cloned."""
    k = loop.opt_of[member]
    p = dict(loop.opt_modules[k].named_parameters())[E]
    row = member - loop.ranges[k][0] if loop.weights.batched and loop.ranges[k][1] - loop.ranges[k][0] > 1 else None
    out = {"E": p.detach()}
    out.update({n: v for n, v in loop.opts[k].state.get(p, {}).items() if isinstance(v, torch.Tensor) and v.dim()})
    return {n: (v[row] if row is not None else v).clone() for n, v in out.items()}


@pytest.mark.parametrize("name", ["adam", "adamw", "sgd"])
def test_a_row_not_drawn_stays_bit_identical_under_lazy_rows(name: str) -> None:
    loop = TrainLoop([_cfg(optim__name=name, optim__lazy_rows=True)])
    token = 3
    loop.update(loop._offset + torch.arange(16)[None])  # a first step: the moments exist and are not zero
    before = _state(loop)
    for _ in range(3):
        loop.update(_batch_without(loop, token))
    after = _state(loop)
    assert set(before) == set(after) and len(after) >= 2  # E and at least one moment
    for n in before:
        assert torch.equal(before[n][token], after[n][token]), n
        assert not torch.equal(before[n], after[n]), f"{n}: the drawn rows moved"


@pytest.mark.parametrize("name", ["adam", "sgd"])
def test_without_lazy_rows_the_same_row_moves(name: str) -> None:
    """The control: the undrawn row moves under decay and momentum unless lazy rows keep it."""
    loop = TrainLoop([_cfg(optim__name=name)])
    loop.update(loop._offset + torch.arange(16)[None])
    before = _state(loop)
    loop.update(_batch_without(loop, 3))
    assert not torch.equal(before["E"][3], _state(loop)["E"][3])


def _one_step(name: str, decay_sets: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, TrainLoop]:
    """E before, its loss gradient, and E after one step from a fresh run."""
    loop = TrainLoop([_cfg(optim__name=name, optim__decay_sets=decay_sets, optim__weight_decay=0.05)])
    idx = loop._offset + torch.arange(16)[None]
    e0 = loop.weights.params(0)[E].detach().clone().double()
    _, x = loop.gradients(idx)
    g = loop.weights.grad(E, 0)
    assert g is not None
    g = g.detach().clone().double()
    loop.apply(x)
    return e0, g, loop.weights.params(0)[E].detach().double(), loop


@pytest.mark.parametrize("name", ["adam", "adamw", "sgd"])
def test_a_decay_free_set_equals_a_hand_computed_step(name: str) -> None:
    e0, g, e1, loop = _one_step(name, "E[3,4]=0")
    o = loop.cfgs[0].optim
    wd = torch.full((e0.shape[0], 1), o.weight_decay, dtype=torch.float64)
    wd[[3, 4]] = 0.0
    lr = o.lr * o.lr_ratio
    if name == "sgd":  # first step: the momentum buffer is the gradient itself
        want = e0 - lr * (g + wd * e0)
    else:
        grad = g + wd * e0 if name == "adam" else g  # coupled L2, or decoupled below
        start = e0 * (1 - lr * wd) if name == "adamw" else e0
        m = (1 - o.betas[0]) * grad / (1 - o.betas[0])  # bias-corrected first moment after one step
        v = (1 - o.betas[1]) * grad**2 / (1 - o.betas[1])
        want = start - lr * m / (v.sqrt() + o.eps)
    torch.testing.assert_close(e1, want, rtol=TOL, atol=1e-9)


def test_decay_sets_with_every_row_at_the_default_equal_the_plain_optimizer() -> None:
    """Decay applied entry by entry at weight_decay everywhere is torch's own decay, to float rounding."""
    _, _, plain, _ = _one_step("adam", "")
    _, _, sets, _ = _one_step("adam", "E[3]=0.05")  # 0.05 is the weight_decay: nothing differs
    torch.testing.assert_close(sets, plain, rtol=TOL, atol=1e-9)


def test_the_most_specific_set_wins() -> None:
    cfg = _cfg(optim__decay_sets="all=0.5,E=0.1,E[2]=0", data__starve_k=2, data__starve_m=1)
    from engine.models import build_model

    masks = decay_masks(build_model(cfg), cfg, split_tokens(cfg))
    assert masks[E][2].unique().tolist() == [0.0]
    assert masks[E][5].unique().tolist() == [0.1]
    assert all(m.unique().tolist() == [0.5] for n, m in masks.items() if n != E)


def test_decay_sets_name_tokens_of_the_run() -> None:
    cfg = _cfg(optim__decay_sets="E[targets]=0", data__starve_k=2, data__starve_m=1)
    from engine.models import build_model

    masks = decay_masks(build_model(cfg), cfg, split_tokens(cfg))
    targets = split_tokens(cfg).target
    assert len(targets) == 2
    for t in range(cfg.data.p):
        assert masks[E][t].unique().tolist() == [0.0 if t in targets else cfg.optim.weight_decay]


@pytest.mark.parametrize(
    ("value", "says"),
    [("E[targets]", "is not SET=WD"), ("E=abc", "is not a number"), ("W=-1", ">= 0"), ("Q[1]=0", "rows are taken")],
)
def test_a_bad_decay_set_is_one_line_naming_the_key(value: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as e:
        _cfg(optim__decay_sets=value)
    assert str(e.value).startswith("optim.decay_sets") and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("lrs", "ranges"),
    [
        ((1e-3, 1e-3), [(0, 2)]),  # equal settings: one optimizer over both rows of the stack
        ((1e-3, 2e-3), [(0, 1), (1, 2)]),  # settings of their own: an optimizer each, with no member axis
    ],
)
def test_lazy_rows_on_stacked_members_keep_each_members_own_rows(lrs: tuple[float, float], ranges: list[Any]) -> None:
    cfgs = [_cfg(optim__lazy_rows=True, optim__decay_sets="E[3]=0", train__seed=s, optim__lr=lrs[s]) for s in (0, 1)]
    loop = TrainLoop(cfgs, stacked=True)
    assert loop.ranges == ranges
    loop.update(loop._offset + torch.arange(16)[None].repeat(2, 1))
    before = [_state(loop, i) for i in range(2)]
    loop.update(_batch_without(loop, 5, member=1))
    after = [_state(loop, i) for i in range(2)]
    for n in before[1]:
        assert torch.equal(before[1][n][5], after[1][n][5]), n
    assert not torch.equal(before[0]["E"][5], after[0]["E"][5])  # member 0 drew token 5 and moved it
