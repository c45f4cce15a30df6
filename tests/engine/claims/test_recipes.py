"""The recipes' readings (engine/claims/recipes.py) on hand-made per-member numbers where every answer is known."""

from __future__ import annotations

from typing import Any

from engine.claims.recipes import (
    Obs,
    arm_name,
    cost_parts,
    deficit_part,
    deficits,
    gain_part,
    keeps_part,
    pair_up,
    table,
    values,
)
from engine.claims.verdicts import FAILS, HOLDS, OPPOSITE, UNREAD

SEEDS = (2, 0, 1)  # out of order: a reader that pairs by position, not by seed, pairs the wrong members
STARVED = ("r0.01", "m1_r1", "m1_matched")


def _o(arm: str, seed: int, target: float, common: float = 0.99, val: float = 0.98, norm: float = 0.5) -> Obs:
    v = {"val_acc_target": target, "val_acc_common": common, "val_acc": val, "target_norm": norm}
    return Obs(arm, seed, v, reached=val >= 0.95)


def world() -> list[Obs]:
    """Adam, three seeds, each seed's numbers its own (seed s adds s / 100):
    - plain: r = 0.01 at 0.6, one pair at r = 1 at 0.5, the control at 0.95;
    - lazy rows: +0.3 in both starved cells; decay only when drawn: +0.2 at r = 0.01 (keeps 2/3 of the gain),
      +0.1 with one pair at r = 1 (a third: fails "keeps half");
    - E out of decay lowers the one-pair cell by 0.2 in every seed (opposite) and costs the control 0.05."""
    obs = []
    for s in SEEDS:
        e = s / 100
        obs += [_o("adam_r0.01", s, 0.6 + e), _o("adam_m1_r1", s, 0.5 + e), _o("adam_r1", s, 0.95 + e)]
        obs += [_o("adam_r0.01_lazy", s, 0.9 + e, norm=1.0), _o("adam_m1_r1_lazy", s, 0.8 + e)]
        obs += [_o("adam_r0.01_lazyd", s, 0.8 + e), _o("adam_m1_r1_lazyd", s, 0.6 + e)]
        obs += [_o("adam_r1_lazyd", s, 0.95 + e, val=0.975)]
        obs += [_o("adam_m1_r1_e0", s, 0.3 + e), _o("adam_r1_e0", s, 0.95 + e, val=0.93)]
    return obs


def test_each_recipe_is_paired_with_its_own_cells_plain_arm_of_the_same_seed() -> None:
    ps = pair_up(world(), "adam")
    assert set(ps) == {
        ("r0.01", "lazy"),
        ("m1_r1", "lazy"),
        ("r0.01", "lazyd"),
        ("m1_r1", "lazyd"),
        ("r1", "lazyd"),
        ("m1_r1", "e0"),
        ("r1", "e0"),
    }
    p = ps[("r0.01", "lazyd")]
    assert [a.seed == b.seed for a, b in p.pairs] == [True] * 3
    assert [round(x, 9) for x in p.changes("val_acc_target")] == [0.2] * 3  # not 0.2 ± 0.01: same seed
    assert {a.arm for a, _ in p.pairs} == {arm_name("adam", "r0.01")}


def test_gain_deficit_and_keeps_parts() -> None:
    obs = world()
    ps = pair_up(obs, "adam")
    assert gain_part(ps, "r0.01", "lazyd", 3).state == HOLDS
    assert gain_part(ps, "m1_r1", "e0", 3).state == OPPOSITE
    assert keeps_part(ps, "r0.01", "lazyd", 3).state == HOLDS
    assert keeps_part(ps, "m1_r1", "lazyd", 3).state == FAILS
    d = deficits(obs, "adam")
    assert set(d) == {"r0.01", "m1_r1"} and all(round(x, 9) == -0.35 for x in d["r0.01"])
    assert deficit_part(d, "r0.01", 3).state == HOLDS


def test_a_part_is_unread_until_every_seed_of_its_arms_has_ended() -> None:
    """A verdict on the seeds that ended first would read the order the sweep ran in: 3 of 5 seeds that all
    hold are not a holding part, and an arm that has not run is unread, never left out."""
    ps = pair_up(world(), "adam")
    assert gain_part(ps, "r0.01", "lazyd", 5).state == UNREAD
    assert "3 of 5 seeds ended" in gain_part(ps, "r0.01", "lazyd", 5).evidence
    assert gain_part(ps, "m1_matched", "lazyd", 3).state == UNREAD
    assert keeps_part(ps, "r0.01", "equal", 3).state == UNREAD
    assert deficit_part({}, "r0.01", 3).state == UNREAD
    common, control = cost_parts(ps, "lazyd", 3, STARVED)
    assert common.state == UNREAD  # the matched-draw cell has no decay-only-when-drawn arm
    assert control.state == HOLDS


def test_costs_read_the_common_tokens_in_the_starved_cells_and_the_control() -> None:
    obs = world()
    s = SEEDS[0]
    obs += [_o("adam_m1_matched", x, 0.8) for x in SEEDS] + [_o("adam_m1_matched_lazyd", x, 0.8) for x in SEEDS]
    obs += [_o("adam_r0.01_e0", x, 0.6, common=0.9 if x == s else 0.99) for x in SEEDS]
    obs += [_o("adam_m1_matched_e0", x, 0.8) for x in SEEDS]
    ps = pair_up(obs, "adam")
    common, control = cost_parts(ps, "lazyd", 3, STARVED)
    assert common.state == HOLDS and control.state == HOLDS  # −0.005 of val in the control: under TOL
    common, control = cost_parts(ps, "e0", 3, STARVED)
    assert common.state == FAILS  # one pair loses 0.09 of the common tokens
    assert control.state == OPPOSITE  # −0.05 in every seed


def test_values_and_table_name_every_pair() -> None:
    obs = world()
    ps = pair_up(obs, "adam")
    v = values(ps, obs, "adam")
    assert v["r001_lazyd_target"] == "+0.200 (+0.200 to +0.200, n = 3)"
    assert v["r001_lazyd_target_k"] == "3 of 3" and v["m1_r1_e0_target_k"] == "0 of 3"
    assert v["r001_deficit_k"] == "3 of 3"
    t = table(ps)
    assert t.count("\n") == 1 + len(ps) and "| r0.01 | decay only when drawn |" in t


def test_a_deficit_within_rounding_is_no_deficit() -> None:
    """Every seed 0.005 below the control is not "the deficit exists": the part asks for more than TOL."""
    obs = [_o("adamw_r1", s, 0.995) for s in SEEDS] + [_o("adamw_r0.01", s, 0.99) for s in SEEDS]
    d = deficits(obs, "adamw")
    assert deficit_part(d, "r0.01", 3).state == FAILS
    obs += [_o("adamw_r1", 9, 0.99), _o("adamw_r0.01", 9, 0.999)]
    assert deficit_part(deficits(obs, "adamw"), "r0.01", 4).state == FAILS


def _curve(target: float) -> Any:
    """A fake member's curves: its targets at `target` + seed / 100, everything else at 0.99."""

    def f(m: Any) -> dict[str, list[float]]:
        v = target + m.seed / 100
        return {"val_acc": [0.99] * 3, "val_acc_target": [v] * 3, "val_acc_common": [0.99] * 3}

    return f


def test_observe_pairs_across_groups_only_where_the_configs_differ_in_the_recipe() -> None:
    """The plain and lazy arms from a group kept beside, by arm and seed; a recipe member whose config
    differs from its plain arm in more than the recipe's keys (here also the lr) is dropped and counted."""
    import tempfile
    from pathlib import Path

    from engine.claims.recipes import observe
    from tests.engine.sweep.fakegroup import fake_group

    root = Path(tempfile.mkdtemp())
    (root / "a").mkdir()
    (root / "b").mkdir()
    cells = {"adam_r0.01": {"train.target_rate": 0.01}, "adam_r1": {"train.target_rate": 1.0}}
    data: dict[str, Any] = {"data__starve_k": 2, "data__starve_m": -1}  # the targets that train.target_rate weights
    table = {"seeds": 2, "arms": cells}
    base = fake_group(root / "b", table, _curve(0.6), [10, 20, 30], preset="cure_decouple", **data)
    recipes = {
        "adam_r0.01_lazyd": {"train.target_rate": 0.01, "optim.lazy_decay": True},
        "adam_r1_lazyd": {"train.target_rate": 1.0, "optim.lazy_decay": True, "optim.lr": 0.002},
    }
    table = {"seeds": 2, "arms": recipes}
    group = fake_group(root / "a", table, _curve(0.9), [10, 20, 30], preset="recipe_lazy_parts", **data)
    obs, bad = observe(group, base)
    assert bad == 2  # both seeds of adam_r1_lazyd also change the lr
    ps = pair_up(obs, "adam")
    assert set(ps) == {("r0.01", "lazyd")}
    assert [round(x, 9) for x in ps[("r0.01", "lazyd")].changes("val_acc_target")] == [0.3, 0.3]


def test_observe_borrows_only_the_arms_it_is_asked_for() -> None:
    """A kept group's oracle arm (nowd) joins the table only when a study borrows it: the lazy-rows page's
    table must not change when another study reads the same kept group."""
    import tempfile
    from pathlib import Path

    from engine.claims.recipes import observe
    from tests.engine.sweep.fakegroup import fake_group

    def curve(m: Any) -> dict[str, list[float]]:
        return {"val_acc": [0.99] * 3, "val_acc_target": [0.5 + m.seed / 100] * 3, "val_acc_common": [0.99] * 3}

    root = Path(tempfile.mkdtemp())
    (root / "a").mkdir()
    (root / "b").mkdir()
    data: dict[str, Any] = {"data__starve_k": 2, "data__starve_m": -1}
    kept = {
        "adam_r0.01": {"train.target_rate": 0.01},
        "adam_r0.01_nowd": {"train.target_rate": 0.01, "optim.decay_sets": "E[targets]=0"},
    }
    base = fake_group(root / "b", {"seeds": 2, "arms": kept}, curve, [10, 20, 30], preset="cure_decouple", **data)
    own = {"adam_r0.01_e0": {"train.target_rate": 0.01, "optim.decay_sets": "E=0"}}
    group = fake_group(root / "a", {"seeds": 2, "arms": own}, curve, [10, 20, 30], preset="recipe_e0", **data)
    plain_only = {o.arm for o in observe(group, base)[0]}
    assert plain_only == {"adam_r0.01", "adam_r0.01_e0"}
    obs, bad = observe(group, base, borrow=("", "nowd"))
    assert {o.arm for o in obs} == {"adam_r0.01", "adam_r0.01_e0", "adam_r0.01_nowd"} and bad == 0
    assert set(pair_up(obs, "adam")) == {("r0.01", "e0"), ("r0.01", "nowd")}


def test_observe_reads_the_plain_arms_of_several_groups_beside() -> None:
    """AdamW's plain arms live in two kept groups (recipe_adamw: r = 0.01; recipe_adamw_pairs: one pair): each
    recipe member pairs with the plain arm of its own cell and seed, whichever group holds it."""
    import tempfile
    from pathlib import Path

    from engine.claims.recipes import observe
    from tests.engine.sweep.fakegroup import fake_group

    root = Path(tempfile.mkdtemp())
    for d in ("own", "rare", "pairs"):
        (root / d).mkdir()
    data: dict[str, Any] = {"data__starve_k": 2, "data__starve_m": -1}
    rare = {"adamw_r0.01": {"train.target_rate": 0.01}}
    pairs = {"adamw_m1_r1": {"data.starve_m": 1}}
    g_rare = fake_group(root / "rare", {"seeds": 2, "arms": rare}, _curve(0.5), [10, 20, 30], **data)
    g_pairs = fake_group(root / "pairs", {"seeds": 2, "arms": pairs}, _curve(0.7), [10, 20, 30], **data)
    own = {
        "adamw_r0.01_lazyd": {"train.target_rate": 0.01, "optim.lazy_decay": True},
        "adamw_m1_r1_lazyd": {"data.starve_m": 1, "optim.lazy_decay": True},
    }
    group = fake_group(root / "own", {"seeds": 2, "arms": own}, _curve(0.9), [10, 20, 30], **data)
    obs, bad = observe(group, [g_rare, None, g_pairs])
    assert bad == 0
    ps = pair_up(obs, "adamw")
    assert [round(x, 9) for x in ps[("r0.01", "lazyd")].changes("val_acc_target")] == [0.4, 0.4]
    assert [round(x, 9) for x in ps[("m1_r1", "lazyd")].changes("val_acc_target")] == [0.2, 0.2]
    alone = pair_up(observe(group, g_rare)[0], "adamw")  # one group beside: the one-pair plain arm is missing
    assert set(alone) == {("r0.01", "lazyd")}
