"""Decay only when drawn (optim.lazy_decay, engine/train/decay.py): an undrawn row of E skips its decay while
its moments and its step go on; checked against hand-computed steps and against the plain optimizer."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from engine.train.loop import TrainLoop
from tests.conftest import tiny_config
from tests.engine.test_decay import TOL, E, _batch_without, _state

WD = 0.05  # large enough that a skipped decay is far above float rounding


def _cfg(**over: Any) -> Any:
    return tiny_config(train__threads=1, optim__weight_decay=WD, **over)


def _drawing(loop: TrainLoop, token: int) -> torch.Tensor:
    """Row indices (N, B): each member's first 16 training examples that hold `token`, then any."""
    rows = []
    for i in range(loop.N):
        x = loop.xs_train[i]
        holds = torch.nonzero((x == token).any(1)).flatten()
        rest = torch.nonzero(~(x == token).any(1)).flatten()
        rows.append(torch.cat([holds, rest])[:16])
    return torch.stack(rows) + loop._offset


def test_under_coupled_adam_an_undrawn_row_steps_on_its_decayed_moments() -> None:
    """Step 1 draws token t, step 2 does not: its gradient is zero (no wd·θ), so m ← β₁m, v ← β₂v, and the
    row moves by Adam's step on those moments, computed here by hand."""
    loop = TrainLoop([_cfg(optim__name="adam", optim__lazy_decay=True)])
    t = 3
    loop.update(_drawing(loop, t))
    s1 = _state(loop)
    loop.update(_batch_without(loop, t))
    s2 = _state(loop)
    o = loop.cfgs[0].optim
    b1, b2 = o.betas
    m, v = s1["exp_avg"][t].double() * b1, s1["exp_avg_sq"][t].double() * b2
    torch.testing.assert_close(s2["exp_avg"][t].double(), m, rtol=TOL, atol=0)
    torch.testing.assert_close(s2["exp_avg_sq"][t].double(), v, rtol=TOL, atol=0)
    lr = o.lr * o.lr_ratio
    want = s1["E"][t].double() - lr * (m / (1 - b1**2)) / ((v / (1 - b2**2)).sqrt() + o.eps)
    torch.testing.assert_close(s2["E"][t].double(), want, rtol=TOL, atol=1e-9)
    assert not torch.equal(s2["E"][t], s1["E"][t])  # it still steps: that is what lazy rows would stop


def test_under_coupled_adam_drawn_rows_decay_as_the_plain_optimizer_and_undrawn_rows_do_not_move() -> None:
    """From a fresh run, one step: rows in the batch get torch's own coupled decay; the others a zero
    gradient and zero moments, so they stay where they are (plain Adam moves them by its decay)."""
    loops = [TrainLoop([_cfg(optim__name="adam", optim__lazy_decay=on)]) for on in (False, True)]
    t = 3
    before = loops[0].weights.params(0)[E].detach().clone()
    for loop in loops:
        loop.update(_batch_without(loop, t))
    plain, lazy = (loop.weights.params(0)[E].detach() for loop in loops)
    drawn = torch.zeros(before.shape[0], dtype=torch.bool)
    drawn[loops[0].xs_train[0][_batch_without(loops[0], t)[0]].flatten()] = True
    torch.testing.assert_close(lazy[drawn], plain[drawn], rtol=TOL, atol=1e-9)
    assert torch.equal(lazy[t], before[t])
    assert not torch.equal(plain[t], before[t])


def test_under_adamw_moments_are_the_plain_ones_and_the_shrink_is_skipped() -> None:
    """AdamW's moments never hold the decay: lazy_decay leaves them as they are without it; the undrawn row
    then differs from the plain run by exactly the skipped shrink lr·wd·θ."""
    loops = [TrainLoop([_cfg(optim__name="adamw", optim__lazy_decay=on)]) for on in (False, True)]
    t = 3
    for loop in loops:
        loop.update(_drawing(loop, t))
    e1 = _state(loops[1])["E"][t].double()
    for loop in loops:
        loop.update(_batch_without(loop, t))
    plain, lazy = _state(loops[0]), _state(loops[1])
    for k in ("exp_avg", "exp_avg_sq"):
        torch.testing.assert_close(lazy[k][t], plain[k][t], rtol=TOL, atol=0)
    o = loops[0].cfgs[0].optim
    # atol: float32 rounding of two rows of about unit size, against a difference of about lr·wd = 5e-5
    torch.testing.assert_close(lazy["E"][t].double() - plain["E"][t].double(), o.lr * WD * e1, rtol=0, atol=3e-7)


@pytest.mark.parametrize("name", ["adam", "adamw", "sgd"])
def test_stacked_members_equal_their_solo_runs(name: str) -> None:
    """Each member's decay masked by its own batch: member 1 never draws token 3, member 0 does."""
    cfgs = [_cfg(optim__name=name, optim__lazy_decay=True, train__seed=s) for s in (0, 1)]
    stacked = TrainLoop(cfgs, stacked=True)
    solo = [TrainLoop([c]) for c in cfgs]
    rows = [_drawing(solo[0], 3)[0], _batch_without(solo[1], 3)[0]]  # each member's own training rows
    for _ in range(3):
        stacked.update(torch.stack(rows) + stacked._offset)
        for loop, r in zip(solo, rows, strict=True):
            loop.update(r[None])
    for i, loop in enumerate(solo):
        torch.testing.assert_close(_state(stacked, i)["E"], _state(loop)["E"], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("key", ["optim.lazy_decay", "optim.equal_rows"])
def test_a_fork_turns_the_option_on_and_records_it(tmp_path: Any, key: str) -> None:
    """From a checkpoint: the fork's config holds the key, its optimizer takes no built-in decay under
    lazy_decay (the rows' decay is applied by decay.py), and it trains to its end."""
    import json

    from engine.train.fork import fork_run
    from tests.engine.test_fork import finish, trained

    parent = trained(tmp_path)
    child = fork_run(parent, at=20, sets={key: "true"})
    run = finish(child)
    group, name = key.split(".")
    assert json.loads((child / "config.json").read_text())[group][name] is True
    assert run.status == "finished"
    assert (child / "metrics.csv").read_text() != (parent / "metrics.csv").read_text()
