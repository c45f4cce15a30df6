"""The frequency tail's figure (ours, §4.2): val accuracy by decile of draw rate, one line per recipe.

A panel per optimizer; each recipe's line is the mean over seeds of its members' `decile_val_acc` (summary.json,
the last evaluation), with the seeds' range as its band. Used by the claim recipe_tail
(grok_tui/figures/claims.py); the study reads the same numbers (engine/claims/studies/recipe_tail.py).
"""

from __future__ import annotations

import math

from engine.claims.recipes import RECIPES
from engine.claims.studies.recipe_tail import OPTS, TAIL_RECIPES, deciles
from engine.records.group import GroupRecord
from grok_tui.figures.data import Curve
from grok_tui.figures.draw import Panel

XLABEL = "decile of draw rate (1: the most drawn tokens)"


def by_decile(group: GroupRecord) -> list[Panel]:
    """A panel per optimizer the group trains; in each, the plain arm's line and each recipe's."""
    ds = deciles(group)
    panels = []
    for opt in OPTS:
        curves = []
        for recipe in ("", *TAIL_RECIPES):
            arm = f"{opt}_{recipe}" if recipe else opt
            rows = [d for (a, _), d in sorted(ds.items()) if a == arm]
            if not rows:
                continue
            cols = [[v for v in col if math.isfinite(v)] for col in zip(*rows, strict=True)]
            xs = [float(k + 1) for k, col in enumerate(cols) if col]
            kept = [col for col in cols if col]
            ys = [sum(c) / len(c) for c in kept]
            name = RECIPES[recipe][1] if recipe else "plain"
            curves.append(Curve(name, xs, ys, [min(c) for c in kept], [max(c) for c in kept], n=len(rows)))
        if curves:
            panels.append(Panel(opt, ["val_acc"], curves, xlabel=XLABEL, log_x=False, ylim=(0.0, 1.05), points=True))
    return panels
