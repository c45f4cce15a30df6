"""Study: the draw deficit and lazy rows under SGD without momentum (ours, §4.2): the decay part, no state."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import Reading
from engine.claims.recipes import deficit_and_cure
from engine.records.group_dir import Group

OPT = "sgd0"
STARVED = ("r0.01", "m1_r1", "m1_matched")


def recipe_sgd(group: Group) -> Reading:
    """Issue 53, question (b) with no optimizer state. The claim, fixed before the data, is the one the Adam and
    AdamW stages make: in each starved cell the plain arm's targets end more than 0.01 below the control's,
    seed by seed, lazy rows (here: the undrawn rows' coupled decay skipped, nothing else) raise them in every
    seed, and they cost neither the common tokens nor the control."""
    return deficit_and_cure(group, OPT, STARVED, "SGD without momentum")


CLAIM = Claim(
    "recipe_sgd",
    "",
    "The recipes under SGD without momentum (ours, §4.2): lazy rows with no optimizer state",
    "recipe_sgd",
    "partly",
    "r = 0.01 − control: {r001_deficit}; lazy rows, decay part only, lift targets in {r001_lazy_target_k} pairs "
    "at r = 0.01, {m1_r1_lazy_target_k} with one pair; guards fail",
    read=recipe_sgd,  # the parts, fixed before the data
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("cures", "decoupling targets"),
    row=227,
)
