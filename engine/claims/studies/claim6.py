"""Study: rank(EW) falls; rank(W) three phases; rank(E) stable (Fig. 10)."""

from __future__ import annotations

import math

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    Row,
    direction,
    part,
    rows,
    seeds_by_tasks,
    select,
    spread,
)
from engine.claims.verdicts import Outcome, Part
from engine.records.group_dir import Group
from engine.rundir import read_metrics

STABLE = 0.10  # rank(E) "stays stable": within this share of its first measured value (our reading)


def _after_g(group: Group, r: Row) -> float | None:
    """rank(EW)'s largest change after generalization, as a share of its value at the evaluation where val
    accuracy first reached 95% (None: the member never did)."""
    if r.gen is None:
        return None
    log = [x for x in read_metrics(group.member_dir(r.member)) if math.isfinite(x.get("rank_EW", math.nan))]
    at = next((x["rank_EW"] for x in log if x["step"] >= r.gen), None)
    rest = [x["rank_EW"] for x in log if x["step"] >= r.gen]
    if not at or not rest:
        return None
    return max(abs(v - at) for v in rest) / at


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
    # Fig. 10's caption: "only Adam-LR continues to adjust rank after generalization"; per seed, Adam-LR's rank(EW)
    # moves by more than STABLE after its generalization and Adam's by no more (the threshold is ours: judged)
    moved = {a: {r.member.seed: _after_g(group, r) for r in select(rs, a)} for a in group.spec.arms}
    lr_m, adam_m = moved.get("adamlr", {}), moved.get("adam", {})
    only: list[bool | None] = []
    for seed, x in sorted(lr_m.items()):
        y = adam_m.get(seed)
        only.append(None if x is None or y is None else (x > STABLE and y <= STABLE))
    only_o = Outcome(only)
    others = [a for a in moved if a not in ("adam", "adamlr")]
    never = {a: sum(v is None for v in moved[a].values()) for a in others}
    parts.append(
        part(
            "only Adam-LR keeps adjusting rank(EW) after generalization",
            only_o,
            f"Adam-LR moves by more than {STABLE:.0%} after its generalization and Adam by no more in "
            f"{only_o.k_of_n('seeds')}"
            + "".join(f"; {a} never generalizes in {n} of {len(moved[a])}" for a, n in never.items() if n),
            judged=f"'keeps adjusting' has no threshold in the paper; {STABLE:.0%} of the value at G is ours",
        )
    )

    def share(xs: dict[int, float | None]) -> str:
        vs = [v for v in xs.values() if v is not None]
        return f"{100 * min(vs):.0f}% to {100 * max(vs):.0f}%" if vs else "-"

    ew = {a: [r.final["rank_EW"] for r in select(rs, a) if "rank_EW" in r.final] for a in group.spec.arms}
    values = {f"ew_{a}": spread(v, ".1f") for a, v in ew.items()}
    values["after_g_adamlr"] = share(lr_m)
    values["after_g_adam"] = share(adam_m)
    values["e_change"] = f"{100 * min(change):+.0f}% to {100 * max(change):+.0f}%".replace("-", "−")
    head = "last rank(EW): " + "; ".join(f"{a} {values[f'ew_{a}']}" for a in ew)
    return Reading(parts, head, falls.k_of_n("members, rank(EW) falls"), seeds_by_tasks(group), values)


CLAIM = Claim(
    "claim6",
    "6",
    "rank(EW) falls; rank(W) three phases; rank(E) stable (Fig. 10)",
    "fig10_rank",
    "partly",
    "rank(EW) falls ({p0}); rank(E) moves {e_change} (judged: not stable); rank(W)'s phases from the "
    "figure; after G rank(EW) moves under Adam too, {after_g_adam} (judged: not only Adam-LR)",
    tail=3,
    figure="fig10",
    read=fig10,
    row=60,
    paper=6,
    plan="6: rank(EW) falls, rank(W) in three phases (Fig. 10)",
)
