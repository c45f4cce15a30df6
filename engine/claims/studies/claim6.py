"""Study: rank(EW) falls; rank(W) three phases; rank(E) stable (Fig. 10)."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    direction,
    part,
    rows,
    seeds_by_tasks,
    select,
    spread,
)
from engine.claims.verdicts import Outcome, Part
from engine.sweep.spec import Group

STABLE = 0.10  # rank(E) "stays stable": within this share of its first measured value (our reading)


def fig10(group: Group) -> Reading:
    """Fig. 10 (§4.1): rank(EW) falls in every setup; rank(W) has three phases; rank(E) stays stable."""
    rs = rows(group)
    falls = direction([r.first["rank_EW"] - r.final["rank_EW"] for r in rs if "rank_EW" in r.final])
    change = [(r.final["rank_E"] - r.first["rank_E"]) / r.first["rank_E"] for r in rs if r.first.get("rank_E")]
    stable = Outcome([abs(c) <= STABLE for c in change], [False] * len(change))
    parts = [
        part("rank(EW) falls", falls, f"last below first in {falls.k_of_n('members')}"),
        part(
            "rank(E) stays stable",
            stable,
            f"within {STABLE:.0%} of its first value in {stable.k_of_n('members')}",
            judged=f"the paper gives no threshold for 'stable'; {STABLE:.0%} is ours",
        ),
        Part(
            "rank(W) has three phases",
            "unread",
            "a shape, read from the figure",
            "no mechanical test of a curve's phases",
        ),
    ]
    ew = {a: [r.final["rank_EW"] for r in select(rs, a) if "rank_EW" in r.final] for a in group.spec.arms}
    values = {f"ew_{a}": spread(v, ".1f") for a, v in ew.items()}
    values["e_change"] = f"{100 * min(change):+.0f}% to {100 * max(change):+.0f}%".replace("-", "−")
    head = "last rank(EW): " + "; ".join(f"{a} {values[f'ew_{a}']}" for a in ew)
    return Reading(parts, head, falls.k_of_n("members, rank(EW) falls"), seeds_by_tasks(group), values)


CLAIM = Claim(
    "claim6",
    "6",
    "rank(EW) falls; rank(W) three phases; rank(E) stable (Fig. 10)",
    "fig10_rank",
    "partly",
    "rank(EW) falls, {p0}; rank(E) changes by {e_change} over the run (judged: not stable); "
    "rank(W)'s phases judged from the figure",
    tail=3,
    figure="fig10",
    read=fig10,
    row=60,
    paper=6,
    plan="6: rank(EW) falls, rank(W) in three phases (Fig. 10)",
)
