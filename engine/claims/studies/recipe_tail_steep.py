"""Study: the recipes on a steeper frequency tail (ours, §4.2): recipe_tail's reading at s = 1.25."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.studies.recipe_tail import recipe_tail

CLAIM = Claim(
    "recipe_tail_steep",
    "",
    "The recipes on a steeper frequency tail (ours, §4.2): s = 1.25",
    "recipe_tail_steep",
    read=recipe_tail,  # the same parts, fixed before the data: presets/recipe_tail_steep.toml says why s = 1.25
    ours=True,
    tail=5,
    figure="recipe_tail_steep",
    row=224,
)
