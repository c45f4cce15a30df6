"""Study: lazy rows' decay part, E out of decay and equal rows under AdamW (ours, §4.2): questions b-d there."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import Reading, beside, n_seeds
from engine.claims.recipes import cost_parts, gain_part, keeps_part, observe, page_values, pair_up
from engine.records.group_dir import Group

OPT = "adamw"
STARVED = ("r0.01", "m1_r1", "m1_matched")
# the cells where lazy rows raised the targets under AdamW in 5 of 5 seeds (recipe_adamw, recipe_adamw_pairs)
CURED = ("r0.01", "m1_r1")
BESIDE = ("recipe_adamw", "recipe_adamw_pairs")  # the plain and lazy-rows arms, kept beside this group


def recipe_adamw_parts(group: Group) -> Reading:
    """Issue 53, questions (b), (c) and (d) under AdamW. The claims, fixed before the data, are the ones the
    Adam studies make (recipe_lazy_parts, recipe_e0, recipe_equal), so that each reads the same under both
    optimizers: decay only when drawn raises the targets and keeps at least half of lazy rows' gain in each
    cell where lazy rows cure; E out of decay raises the targets in each starved cell; equal rows raises them
    in each starved cell and keeps half of lazy rows' gain where lazy rows cure; no recipe costs the common
    tokens or the control (guards). Seed by seed against the plain arm kept beside (BESIDE)."""
    obs, bad = observe(group, [beside(group, name) for name in BESIDE])
    ps = pair_up(obs, OPT)
    want = n_seeds(group)
    parts = []
    for cell in CURED:
        parts += [gain_part(ps, cell, "lazyd", want), keeps_part(ps, cell, "lazyd", want)]
    parts += cost_parts(ps, "lazyd", want, STARVED)
    parts += [gain_part(ps, cell, "e0", want) for cell in STARVED]
    parts += cost_parts(ps, "e0", want, STARVED)
    parts += [gain_part(ps, cell, "equal", want) for cell in STARVED]
    parts += [keeps_part(ps, cell, "equal", want) for cell in CURED]
    parts += cost_parts(ps, "equal", want, STARVED)
    v = page_values(ps, obs, OPT, bad)
    head = f"under AdamW, decay only when drawn − plain, targets: {v.get('r001_lazyd_target', '-')} at r = 0.01"
    k = f"{v.get('r001_lazyd_target_k', '0 of 0')} pairs higher at r = 0.01"
    return Reading(parts, head, k, f"{n_seeds(group)} × 1 ({group.base.data.op})", v)


CLAIM = Claim(
    "recipe_adamw_parts",
    "",
    "Lazy rows' decay part, E out of decay and equal rows under AdamW (ours, §4.2)",
    "recipe_adamw_parts",
    "partly",
    "decay only when drawn lifts {r001_lazyd_target_k} at r = 0.01, {m1_r1_lazyd_target_k} with one pair; equal rows "
    "{r001_equal_target_k}, {m1_r1_equal_target_k}; E out of decay lowers every cell, control {r1_e0_val_k} higher",
    read=recipe_adamw_parts,  # the parts, fixed before the data
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("decoupling targets",),
    row=225,
)
