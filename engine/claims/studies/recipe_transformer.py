"""Study: the draw deficit and lazy rows in the one-layer transformer (ours, §6 and §4.2): does mul's finding
reach a model with attention?"""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import Reading
from engine.claims.recipes import deficit_and_cure
from engine.records.group_dir import Group

OPT = "tf"  # the preset's arms are tf_CELL and tf_CELL_lazy
STARVED = ("r0.01", "m1_r1")  # draws cut with the data intact, and one pair per target at full draws


def recipe_transformer(group: Group) -> Reading:
    """Issue 53, question (e), the transformer. The claim, fixed before the data, as recipe_adamw's: in the
    one-layer transformer under the paper's Adam (lr 0.01, transformer_adam's optimizer) each starved cell
    shows the deficit (the plain arm's targets end more than 0.01 below the control's in every seed), lazy
    rows raise the targets in every seed, and they cost neither the common tokens nor the control."""
    return deficit_and_cure(group, OPT, STARVED, "transformer")


CLAIM = Claim(
    "recipe_transformer",
    "",
    "The draw deficit in the transformer (ours, §6 and §4.2): lazy rows at r = 0.01 and one pair",
    "recipe_transformer",
    "partly",
    "deficit in {r001_deficit_k} seeds at r = 0.01 and {m1_r1_deficit_k} with one pair; lazy rows lift "
    "{r001_lazy_target_k} and {m1_r1_lazy_target_k} pairs; control {r1_lazy_val}",
    read=recipe_transformer,
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("decoupling targets",),
    row=222,
)
