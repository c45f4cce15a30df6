"""Study: Update ratio ‖ΔE‖/‖ΔW‖ grows with c (paper, App. B, eq. 23)."""

from __future__ import annotations

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
)
from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group


def appb(group: Group) -> Reading:
    """App. B, eq. 23: the update ratio ‖ΔE‖/‖ΔW‖ grows with c, by about c (within a factor 2, our reading)."""
    rs = rows(group)
    med = {r.member.id: column_median(group, r, "update_ratio") for r in rs}
    adam, c10 = select(rs, "adam"), select(rs, "c10")
    ab = by_seed(adam)
    q = [
        med[r.member.id] / med[ab[r.member.seed].member.id]  # type: ignore[operator]
        for r in c10
        if r.member.seed in ab and med[r.member.id] and med[ab[r.member.seed].member.id]
    ]
    grows = direction([x - 1 for x in q])
    c = float(group.spec.arms["c10"]["optim.lr_ratio"])
    near = Outcome([c / 2 <= x <= 2 * c for x in q], [x < 1 for x in q])
    parts = [
        part("the ratio grows with c", grows, f"c = {c:g} above Adam in {grows.k_of_n('seeds')}"),
        part(f"by about c ({c:g}×)", near, f"within {c / 2:g}–{2 * c:g}× in {near.k_of_n('seeds')}"),
    ]
    values = {"gain": spread(q, ".2f"), "c": f"{c:g}"}
    head = f"median ‖ΔE‖/‖ΔW‖, c = {c:g} over Adam, per seed: {values['gain']}× for {c:g}× c"
    return Reading(parts, head, grows.k_of_n("seeds"), seeds_by_tasks(group), values)


CLAIM = Claim(
    "appb",
    "",
    "Update ratio ‖ΔE‖/‖ΔW‖ grows with c (paper, App. B, eq. 23)",
    "appb_update_ratio",
    "partly",
    "the ratio grows with c ({p0}), by far less than c ({p1})",
    figure="appb",
    read=appb,
    row=110,
    paper=3,
    plan="3: the update ratio ‖ΔE‖/‖ΔW‖ grows with c (App. B, eq. 23)",
)
