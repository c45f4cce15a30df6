"""Study: λmax(E) ≪ λmax(W) under Adam; Adam-LR brings them closer (Figs. 7, 9)."""

from __future__ import annotations

import math

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    by_seed,
    column_median,
    direction,
    part,
    rows,
    seeds_by_tasks,
    select,
    spread,
    steps,
)
from engine.sweep.spec import Group


def fig7(group: Group) -> Reading:
    """Figs. 7, 9 (§4.1, App. C.1): λmax(W)/λmax(E) > 1 under Adam, and nearer 1 under Adam-LR; the median
    over the evaluations every member logged (steps up to the shortest run's end)."""
    from engine.probes.hessian import block_columns

    rs = rows(group)
    e_col, w_col = block_columns(group.config(rs[0].member).probe)
    upto = min(float(r.raw["steps"]) for r in rs)
    ratio = {r.member.id: column_median(group, r, w_col, upto, ratio_of=e_col) for r in rs}
    adam, lr = select(rs, "adam"), select(rs, "adamlr")
    ra = [x for r in adam if (x := ratio[r.member.id]) is not None]
    rl = [x for r in lr if (x := ratio[r.member.id]) is not None]
    above = direction([x - 1 for x in ra])
    lb = by_seed(lr)
    closer = direction(
        [
            abs(math.log(ratio[r.member.id])) - abs(math.log(ratio[lb[r.member.seed].member.id]))  # type: ignore[arg-type]
            for r in adam
            if r.member.seed in lb and ratio[r.member.id] and ratio[lb[r.member.seed].member.id]
        ]
    )
    parts = [
        part("λmax(E) < λmax(W) under Adam", above, f"W/E above 1 in {above.k_of_n('seeds')}"),
        part("Adam-LR brings them closer", closer, f"nearer 1 under Adam-LR in {closer.k_of_n('seeds')}"),
    ]
    values = {"adam": spread(ra, ".1f"), "adamlr": spread(rl, ".1f"), "upto": steps(upto), "e": e_col, "w": w_col}
    head = f"λmax(W)/λmax(E), median over steps 0–{values['upto']}: Adam {values['adam']}, Adam-LR {values['adamlr']}"
    return Reading(parts, head, above.k_of_n("W above E under Adam"), seeds_by_tasks(group), values)


CLAIM = Claim(
    "claim5",
    "5",
    "λmax(E) ≪ λmax(W) under Adam; Adam-LR brings them closer (Figs. 7, 9)",
    "fig7_hessian",
    "partly",
    "{p0}; {p1}",
    tail=3,
    figure="fig7",
    read=fig7,
    row=50,
    paper=5,
    plan="5: λmax(E) ≪ λmax(W) under Adam (Figs. 7, 9)",
)
