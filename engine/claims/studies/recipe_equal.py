"""Study: row-norm equalization (ours, §4.2): every operand row of E held at one distance from the ring's centre."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import Reading, beside, n_seeds
from engine.claims.recipes import cost_parts, gain_part, keeps_part, observe, page_values, pair_up
from engine.records.group_dir import Group

OPT = "adam"
STARVED = ("r0.01", "m1_r1", "m1_matched")  # the rare rows (r = 0.01) and the one-pair rows (m1_*)
CURED = ("r0.01", "m1_r1")  # where lazy rows raised the targets in 5 of 5 seeds (docs/claims/cure_decouple.md)


def recipe_equal(group: Group) -> Reading:
    """Issue 53, question (d): optim.equal_rows moves each operand row, after each step, to the mean distance
    from the ring's centre (the rescale intervention's centre and radius, which restored the starved targets
    at once in every cell). The claim, fixed before the data: it raises the targets in every seed in each
    starved cell, keeps at least half of lazy rows' gain where lazy rows cure, and costs neither the common
    tokens nor the control. cure_decouple's plain and lazy-rows arms of the same cell and seed are kept
    beside the group (engine/claims/recipes.py `observe`)."""
    obs, bad = observe(group, beside(group, "cure_decouple"))
    ps = pair_up(obs, OPT)
    want = n_seeds(group)
    parts = [gain_part(ps, c, "equal", want) for c in STARVED]
    parts += [keeps_part(ps, c, "equal", want) for c in CURED]
    parts += cost_parts(ps, "equal", want, STARVED)
    v = page_values(ps, obs, OPT, bad)
    head = f"equal rows − plain, targets: {v.get('r001_equal_target', '-')} at r = 0.01"
    k = f"{v.get('r001_equal_target_k', '0 of 0')} pairs higher at r = 0.01"
    return Reading(parts, head, k, f"{n_seeds(group)} × 1 ({group.base.data.op})", v)


CLAIM = Claim(
    "recipe_equal",
    "",
    "Row-norm equalization (ours, §4.2): equal rows under Adam",
    "recipe_equal",
    "partly",
    "higher in {r001_equal_target_k} pairs at r = 0.01, {m1_r1_equal_target_k} with one pair at r = 1, "
    "{m1_matched_equal_target_k} at matched draws; common tokens and control unharmed",
    read=recipe_equal,
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("decoupling targets",),
    row=219,
)
