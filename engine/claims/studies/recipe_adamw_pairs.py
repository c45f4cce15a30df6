"""Study: the one-pair deficit and lazy rows under AdamW (ours, §4.2): decoupled decay, as grokking work trains."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import Reading, beside
from engine.claims.recipes import deficit_and_cure
from engine.records.group_dir import Group

OPT = "adamw"
PAIRS = ("m1_r1", "m1_matched")  # one pair per target, at full draws and at matched draws


def recipe_adamw_pairs(group: Group) -> Reading:
    """Issue 53, question (a), the one-pair cells. The claim, fixed before the data, as recipe_adamw's: under
    AdamW (wd 1, betas (0.9, 0.98), lr 2e-3) a one-pair token shows a deficit (the plain arm's targets end
    below the control's, seed by seed) and lazy rows raise its targets in every seed, at no cost to the common
    tokens or the control. The control (r = 1) and the r = 0.01 arms are recipe_adamw's, kept beside."""
    return deficit_and_cure(group, OPT, PAIRS, "AdamW", beside(group, "recipe_adamw"))


CLAIM = Claim(
    "recipe_adamw_pairs",
    "",
    "The one-pair deficit under AdamW (ours, §4.2): one pair at r = 1 and at matched draws",
    "recipe_adamw_pairs",
    "partly",
    "one pair at r = 1 against the control: {m1_r1_deficit}, {m1_r1_deficit_k} seeds over 0.01 below; lazy rows "
    "lift it in {m1_r1_lazy_target_k} pairs; matched draws: neither",
    read=recipe_adamw_pairs,
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("decoupling targets",),
    row=217,
)
