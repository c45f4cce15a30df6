"""The transformer study (engine/claims/studies/recipe_transformer.py) reads every arm its preset trains."""

from __future__ import annotations

from engine.claims.recipes import CELLS, RECIPES, Obs, arm_name, deficits, pair_up
from engine.claims.studies.recipe_transformer import OPT, STARVED
from engine.config.presets import load_preset


def test_every_arm_of_the_preset_is_a_cell_and_recipe_the_study_pairs() -> None:
    p = load_preset("recipe_transformer")
    assert p.config.model.kind == "transformer" and p.config.optim.name == "adam"
    arms = set(p.sweep["arms"])
    want = {arm_name(OPT, c, r) for c in (*STARVED, "r1") for r in ("", "lazy")}
    assert arms == want and all(c in CELLS for c in STARVED) and "lazy" in RECIPES


def test_the_study_pairs_the_transformer_arms_by_seed() -> None:
    obs = [Obs(a, s, {"val_acc_target": t}, reached=True) for s in (2, 0, 1) for a, t in
           [("tf_r1", 1.0 - s / 100), ("tf_r0.01", 0.6 + s / 10), ("tf_r0.01_lazy", 0.9)]]  # fmt: skip
    assert sorted(round(x, 9) for x in deficits(obs, OPT)["r0.01"]) == [-0.4, -0.29, -0.18]  # each seed its own control
    assert [round(x, 9) for x in pair_up(obs, OPT)[("r0.01", "lazy")].changes("val_acc_target")] == [0.3, 0.2, 0.1]
