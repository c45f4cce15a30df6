"""SGD without momentum (engine/claims/studies/recipe_sgd.py): the preset trains what the study reads."""

from __future__ import annotations

from engine.claims.recipes import CELLS, arm_name
from engine.claims.studies.recipe_sgd import OPT, STARVED
from engine.config.presets import load_preset


def test_every_cell_plain_and_with_lazy_rows_under_sgd_without_momentum() -> None:
    p = load_preset("recipe_sgd")
    assert p.config.optim.name == "sgd" and p.config.optim.momentum == 0.0
    assert set(p.sweep["arms"]) == {arm_name(OPT, c, r) for c in CELLS for r in ("", "lazy")}
    assert set(STARVED) < set(CELLS)
    for arm, keys in p.sweep["arms"].items():  # the lazy arm of a cell differs from its plain arm in lazy_rows alone
        if arm.endswith("_lazy"):
            plain = p.sweep["arms"][arm.removesuffix("_lazy")]
            assert {k: v for k, v in keys.items() if k != "optim.lazy_rows"} == plain and keys["optim.lazy_rows"]
