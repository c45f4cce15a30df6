"""Study: the draw deficit and the recipes under AdamW (ours, §4.2): decoupled decay, as grokking work trains."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import Reading
from engine.claims.recipes import deficit_and_cure
from engine.records.group_dir import Group

OPT = "adamw"
STARVED = ("r0.01",)  # the starved cell this stage runs: draws cut with the data intact


def recipe_adamw(group: Group) -> Reading:
    """Issue 53, question (a). The claim, fixed before the data: under AdamW (wd 1, betas (0.9, 0.98)) the
    draw deficit exists (in each starved cell the plain arm's targets end below the control's, seed by seed)
    and lazy rows cure it there (they raise the targets in every seed) at no cost to the common tokens or the
    control. The other recipes are the table's and the page's questions."""
    return deficit_and_cure(group, OPT, STARVED, "AdamW")


CLAIM = Claim(
    "recipe_adamw",
    "",
    "The recipes under AdamW (ours, §4.2): the draw deficit with decoupled decay",
    "recipe_adamw",
    "partly",
    "r = 0.01 against the control: {r001_deficit}, over 0.01 below in {r001_deficit_k} seeds; lazy rows "
    "lift the targets in {r001_lazy_target_k} pairs, at no cost",
    read=recipe_adamw,
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("cures", "decoupling targets"),
    row=216,
)
