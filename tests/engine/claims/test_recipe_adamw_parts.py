"""Questions b-d under AdamW (engine/claims/studies/recipe_adamw_parts.py): the preset trains every recipe the
study reads, in every cell, and the plain arms come from the groups beside it."""

from __future__ import annotations

from engine.claims.recipes import CELLS, RECIPES, arm_name
from engine.claims.studies.recipe_adamw_parts import BESIDE, CURED, OPT, STARVED
from engine.config.presets import load_preset


def test_every_cell_and_recipe_is_an_arm_and_the_plain_arms_are_beside() -> None:
    p = load_preset("recipe_adamw_parts")
    assert p.config.optim.name == OPT and p.config.optim.weight_decay == 1.0
    want = {arm_name(OPT, c, r) for c in CELLS for r in ("lazyd", "e0", "equal")}
    assert set(p.sweep["arms"]) == want and all(r in RECIPES for r in ("lazyd", "e0", "equal"))
    assert set(CURED) <= set(STARVED) < set(CELLS)
    beside = {a for name in BESIDE for a in load_preset(name).sweep["arms"]}
    assert {arm_name(OPT, c, r) for c in CELLS for r in ("", "lazy")} <= beside
    for arm, keys in p.sweep["arms"].items():  # a recipe arm sets its cell's keys and its recipe's alone
        recipe = arm.rsplit("_", 1)[1]
        assert set(keys) - {"train.target_rate", "data.starve_m"} == set(RECIPES[recipe][0])
