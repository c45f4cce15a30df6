"""The tasks study's reading (engine/claims/studies/recipe_tasks.py) on hand-made per-member numbers."""

from __future__ import annotations

from engine.claims.recipes import Obs, pair_up
from engine.claims.studies.recipe_tasks import _deficit_part, _gain_part, gaps, table
from engine.claims.verdicts import FAILS, HOLDS, OPPOSITE, UNREAD

SEEDS = (1, 0, 2)  # out of order: a reader that pairs by position pairs the wrong members


def _o(arm: str, seed: int, target: float, common: float) -> Obs:
    v = {"val_acc_target": target, "val_acc_common": common, "val_acc": common, "target_norm": 0.5}
    return Obs(arm, seed, v, reached=common >= 0.95)


def world() -> list[Obs]:
    """add: targets 0.3 below the common tokens, lazy rows +0.2; div: no deficit (targets at the common
    tokens' level, 0.005 below: rounding), lazy rows lower the targets by 0.1 in every seed."""
    obs = []
    for s in SEEDS:
        e = s / 100
        obs += [_o("add_r0.01", s, 0.6 + e, 0.9 + e), _o("add_r0.01_lazy", s, 0.8 + e, 0.9 + e)]
        obs += [_o("div_r0.01", s, 0.895, 0.9), _o("div_r0.01_lazy", s, 0.795, 0.9)]
    return obs


def test_the_deficit_is_read_within_each_member_by_seed() -> None:
    obs = world()
    assert [round(x, 9) for x in gaps(obs, "add")] == [-0.3] * 3
    assert _deficit_part("add", gaps(obs, "add"), 3).state == HOLDS
    assert _deficit_part("div", gaps(obs, "div"), 3).state == FAILS  # 0.005 below is within TOL
    assert _deficit_part("sub", gaps(obs, "sub"), 3).state == UNREAD  # no sub member ended


def test_lazy_rows_gain_pairs_each_task_with_its_own_plain_arm() -> None:
    obs = world()
    add, div = pair_up(obs, "add")[("r0.01", "lazy")], pair_up(obs, "div")[("r0.01", "lazy")]
    assert [round(x, 9) for x in add.changes("val_acc_target")] == [0.2] * 3
    assert _gain_part("add", add, 3).state == HOLDS
    assert _gain_part("div", div, 3).state == OPPOSITE
    assert _gain_part("add", add, 4).state == UNREAD  # a fourth seed has not ended
    t = table(obs, {"add": add, "div": div})
    assert t.count("\n") == 3 and "| add | 3 |" in t and "| div | 3 |" in t
