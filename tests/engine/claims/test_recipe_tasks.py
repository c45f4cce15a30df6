"""The tasks study's reading (engine/claims/studies/recipe_tasks.py) on hand-made per-member numbers."""

from __future__ import annotations

from engine.claims.recipes import Obs, pair_up
from engine.claims.studies.recipe_tasks import deficit_part, gain_part, gaps, table
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
    assert deficit_part("add", gaps(obs, "add"), 3).state == HOLDS
    assert deficit_part("div", gaps(obs, "div"), 3).state == FAILS  # 0.005 below is within TOL
    assert deficit_part("sub", gaps(obs, "sub"), 3).state == UNREAD  # no sub member ended


def test_lazy_rows_gain_pairs_each_task_with_its_own_plain_arm() -> None:
    obs = world()
    add, div = pair_up(obs, "add")[("r0.01", "lazy")], pair_up(obs, "div")[("r0.01", "lazy")]
    assert [round(x, 9) for x in add.changes("val_acc_target")] == [0.2] * 3
    assert gain_part("add", add, 3).state == HOLDS
    assert gain_part("div", div, 3).state == OPPOSITE
    assert gain_part("add", add, 4).state == UNREAD  # a fourth seed has not ended
    t = table(obs, {"add": add, "div": div})
    assert t.count("\n") == 3 and "| add | 3 |" in t and "| div | 3 |" in t


def test_the_one_pair_cells_are_read_as_the_rare_ones() -> None:
    """recipe_tasks_pairs: one pair at r = 1 and decay only when drawn, each task against its own plain arm."""
    from engine.claims.recipes import CELLS
    from engine.claims.studies.recipe_tasks_pairs import GAINS
    from engine.config.presets import load_preset

    obs = [o for s in SEEDS for o in (_o("sub_m1_r1", s, 0.4, 0.95), _o("sub_m1_r1_lazyd", s, 0.7 + s / 100, 0.95))]
    assert [round(x, 9) for x in gaps(obs, "sub", "m1_r1")] == [-0.55] * 3
    assert deficit_part("sub", gaps(obs, "sub", "m1_r1"), 3, "m1_r1").state == HOLDS
    p = pair_up(obs, "sub")[("m1_r1", "lazyd")]
    assert gain_part("sub", p, 3, "m1_r1", "lazyd").text.startswith("on sub with one pair at r = 1, decay only when")
    assert gain_part("sub", p, 3, "m1_r1", "lazyd").state == HOLDS
    arms = set(load_preset("recipe_tasks_pairs").sweep["arms"])
    kept = set(load_preset("recipe_tasks").sweep["arms"])  # the r = 0.01 plain and lazy arms, kept beside
    for op in ("add", "sub", "div"):
        assert {f"{op}_{c}_{r}" for c, r in GAINS} | {f"{op}_m1_r1"} == {a for a in arms if a.startswith(op)}
        assert {f"{op}_r0.01", f"{op}_r0.01_lazy"} <= kept and all(c in CELLS for c, _ in GAINS)


def test_the_one_pair_reader_counts_over_the_tasks(tmp_path) -> None:
    """recipe_tasks_pairs' reader on a hand-made group of its own arms, 2 seeds: one pair ends 0.5 below the
    common tokens on every task, decay only when drawn lifts it by 0.3 except on div seed 1 (no change), and lazy
    rows by 0.2. The status note's counts are over the three tasks: 6 of 6 seeds, 5 of 6 pairs."""
    from engine.claims.studies.recipe_tasks_pairs import recipe_tasks_pairs
    from engine.config.presets import load_preset
    from engine.records.group_dir import Member
    from tests.engine.sweep.fakegroup import fake_group

    def curve(m: Member) -> dict[str, list[float]]:
        lift = {"lazy": 0.2, "lazyd": 0.0 if m.arm.startswith("div") and m.seed == 1 else 0.3}
        target = 0.45 + lift.get(m.arm.rsplit("_", 1)[1], 0.0)
        return {
            "val_acc_target": [target] * 3,
            "val_acc_common": [0.95] * 3,
            "val_acc": [0.9] * 3,
            "target_norm": [0.5] * 3,
        }

    table = {**load_preset("recipe_tasks_pairs").sweep, "seeds": 2}
    g = fake_group(tmp_path, table, curve, [0, 20, 40], data__starve_k=2)
    r = recipe_tasks_pairs(g)
    v = r.values
    assert v["m1_r1_gap_k"] == "6 of 6" and v["m1_r1_lazyd_k"] == "5 of 6" and v["mismatched"] == "0"
    assert v["div_m1_r1_lazyd_k"] == "1 of 2" and v["add_m1_r1_lazy_k"] == "2 of 2"
    assert v["add_m1_r1_gap"].startswith("−0.500") and v["add_r001_gap"] == "-"  # r = 0.01's plain arm is beside
    assert r.k_of_n == "6 of 6 pairs higher"
