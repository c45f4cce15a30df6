"""Row-norm equalization (optim.equal_rows, engine/train/row_norms.py): after a step every row on the group
axis sits at the mean distance from the ring's centre, in its own direction; the centre is the rescale
intervention's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from engine.task.dlog import group_axis
from engine.train.interventions import ring_centre
from engine.train.loop import TrainLoop
from engine.train.row_norms import equalize, ring_projections
from tests.conftest import tiny_config
from tests.engine.test_decay import E

TOL = 1e-6


def _cfg(**over: Any) -> Any:
    return tiny_config(train__threads=1, **over)


def _ring(n: int, d: int, seed: int) -> torch.Tensor:
    """Rows on a noisy ring of frequency 2 around an off-origin centre, with uneven radii."""
    g = torch.Generator().manual_seed(seed)
    theta = 2 * torch.pi * 2 * torch.arange(n, dtype=torch.float64) / n
    A, B, c = (torch.randn(d, generator=g, dtype=torch.float64) for _ in range(3))
    radii = 0.3 + torch.rand(n, 1, generator=g, dtype=torch.float64)
    return c + radii * (theta.cos()[:, None] * A + theta.sin()[:, None] * B) + 0.05 * torch.randn(n, d, generator=g)


@pytest.mark.parametrize("op", ["add", "mul"])
def test_the_centre_is_the_rescale_interventions(op: str) -> None:
    cfg = _cfg(data__op=op, data__p=13)
    axis = group_axis(cfg.data)
    E_ = torch.zeros(cfg.data.vocab_size, 6, dtype=torch.float64)
    E_[torch.as_tensor(axis.order)] = _ring(axis.n, 6, seed=1)
    want = ring_centre(E_, axis.order.tolist(), axis.order.tolist())
    X, solve = ring_projections(axis.n)
    got = equalize(E_.clone(), torch.as_tensor(axis.order), X, solve)
    torch.testing.assert_close(got, want.double(), rtol=1e-9, atol=1e-9)


def test_each_row_is_at_the_mean_distance_in_its_own_direction() -> None:
    n = 12
    E_ = torch.cat([_ring(n, 5, seed=2), torch.randn(2, 5, dtype=torch.float64)])  # + the op and '=' rows
    before = E_.clone()
    order = torch.arange(n)
    X, solve = ring_projections(n)
    c = equalize(E_, order, X, solve)
    off0, off1 = before[:n] - c, E_[:n] - c
    dist0, dist1 = off0.norm(dim=1), off1.norm(dim=1)
    torch.testing.assert_close(dist1, torch.full_like(dist1, float(dist0.mean())), rtol=TOL, atol=0)
    torch.testing.assert_close(off1 / dist1[:, None], off0 / dist0[:, None], rtol=TOL, atol=TOL)
    assert torch.equal(E_[n:], before[n:])


def test_stacked_rows_are_equalized_member_by_member() -> None:
    n = 10
    E_ = torch.stack([_ring(n, 4, seed=s) for s in (3, 4)])  # (2, n, d)
    X, solve = ring_projections(n)
    c = equalize(E_.clone(), torch.arange(n), X, solve)
    for i in range(2):
        torch.testing.assert_close(c[i], equalize(E_[i].clone(), torch.arange(n), X, solve))


@pytest.mark.parametrize("op", ["add", "mul"])
def test_after_a_training_step_the_operand_rows_are_equal_and_the_rest_as_the_step_left_them(op: str) -> None:
    loops = [TrainLoop([_cfg(data__op=op, optim__equal_rows=on)]) for on in (False, True)]
    for loop in loops:
        loop.update(loop._offset + torch.arange(16)[None])
    plain, equal = (loop.weights.params(0)[E].detach().double() for loop in loops)
    rules = loops[1].row_rules[0][1]
    assert rules.equal is not None and rules.equal.centre is not None
    c = rules.equal.centre
    order = torch.as_tensor(group_axis(loops[1].cfgs[0].data).order)
    dist = (equal[order] - c).norm(dim=1)
    torch.testing.assert_close(
        dist, torch.full_like(dist, float((plain[order] - c).norm(dim=1).mean())), rtol=TOL, atol=0
    )
    off = [(e[order] - c) / (e[order] - c).norm(dim=1, keepdim=True) for e in (plain, equal)]
    torch.testing.assert_close(off[1], off[0], rtol=TOL, atol=TOL)
    off_axis = [t for t in range(equal.shape[0]) if t not in set(order.tolist())]  # op, '=' (and 0 on mul)
    assert torch.equal(equal[off_axis], plain[off_axis])
