"""Study: which part of lazy rows cures the draw deficit (ours, §4.2): decay only when drawn, under the paper's Adam."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import Reading, beside, n_seeds
from engine.claims.recipes import CELLS, CONTROL, cost_parts, gain_part, keeps_part, observe, page_values, pair_up
from engine.records.group_dir import Group

OPT = "adam"
CURED = (
    "r0.01",
    "m1_r1",
)  # the cells where lazy rows raised the targets in 5 of 5 seeds (docs/claims/cure_decouple.md)


def recipe_lazy_parts(group: Group) -> Reading:
    """Issue 53, question (b): lazy rows skip three things for an undrawn row (decay, moment update, step);
    decay only when drawn (optim.lazy_decay) skips the decay alone. The claim, fixed before the data: in each
    cell where lazy rows cure the deficit, decay only when drawn raises the targets too and keeps at least half
    of lazy rows' gain seed by seed, at no cost to the common tokens or the control. The plain and lazy-rows
    arms are cure_decouple's, kept beside this group (engine/claims/recipes.py `observe`)."""
    obs, bad = observe(group, beside(group, "cure_decouple"))
    ps = pair_up(obs, OPT)
    want = n_seeds(group)
    parts = []
    for cell in CURED:
        parts += [gain_part(ps, cell, "lazyd", want), keeps_part(ps, cell, "lazyd", want)]
    parts += cost_parts(ps, "lazyd", want, ("r0.01", "m1_r1", "m1_matched"))
    v = page_values(ps, obs, OPT, bad)
    lazyd = [
        x for c in CELLS if c != CONTROL and (c, "lazyd") in ps for x in ps[(c, "lazyd")].changes("val_acc_target")
    ]
    head = f"decay only when drawn − plain, starved targets: {v.get('r001_lazyd_target', '-')} at r = 0.01"
    k = f"{sum(x > 0 for x in lazyd)} of {len(lazyd)} pairs higher"
    return Reading(parts, head, k, f"{n_seeds(group)} × 1 ({group.base.data.op})", v)


CLAIM = Claim(
    "recipe_lazy_parts",
    "",
    "Lazy rows' decay part alone (ours, §4.2): decay only when drawn under Adam",
    "recipe_lazy_parts",
    "supported",
    "decay only when drawn lifts the targets as lazy rows do (r = 0.01 {r001_lazyd_target_k}, one pair "
    "{m1_r1_lazyd_target_k} pairs, at least half of lazy rows' gain in every seed); common tokens and control "
    "unharmed",
    read=recipe_lazy_parts,
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("decoupling targets",),
    row=215,
)
