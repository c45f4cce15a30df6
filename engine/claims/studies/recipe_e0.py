"""Study: the embedding out of weight decay (ours, §4.2): the practitioners' recipe under the paper's Adam."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import Reading, beside, n_seeds
from engine.claims.recipes import cost_parts, gain_part, observe, page_values, pair_up
from engine.records.group_dir import Group

OPT = "adam"
STARVED = ("r0.01", "m1_r1", "m1_matched")  # the rare rows (r = 0.01) and the one-pair rows (m1_*)


def recipe_e0(group: Group) -> Reading:
    """Issue 53, question (c): language-model recipes leave the embedding out of weight decay
    (optim.decay_sets = "E=0"), which names no token. The claim, fixed before the data: it is a cure, that is,
    it raises the targets in every seed in each starved cell (rare rows at r = 0.01 and one-pair rows at r = 1
    and at matched draws), at no cost to the common tokens or the control. cure_decouple's plain, lazy-rows
    and oracle (no decay on the target rows alone) arms of the same cell and seed are kept beside the group
    and shown in its table (engine/claims/recipes.py `observe`)."""
    obs, bad = observe(group, beside(group, "cure_decouple"), borrow=("", "lazy", "nowd"))
    ps = pair_up(obs, OPT)
    want = n_seeds(group)
    parts = [gain_part(ps, c, "e0", want) for c in STARVED]
    parts += cost_parts(ps, "e0", want, STARVED)
    v = page_values(ps, obs, OPT, bad)
    head = f"E out of decay − plain, targets: {v.get('r001_e0_target', '-')} at r = 0.01"
    k = f"{v.get('r001_e0_target_k', '0 of 0')} pairs higher at r = 0.01"
    return Reading(parts, head, k, f"{n_seeds(group)} × 1 ({group.base.data.op})", v)


CLAIM = Claim(
    "recipe_e0",
    "",
    "The embedding out of decay (ours, §4.2): E = 0 under Adam",
    "recipe_e0",
    "not supported",
    "no cure: higher in {r001_e0_target_k} pairs at r = 0.01, {m1_r1_e0_target_k} with one pair at r = 1, "
    "{m1_matched_e0_target_k} at matched draws; control unharmed",
    read=recipe_e0,
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("decoupling targets",),
    row=218,
)
