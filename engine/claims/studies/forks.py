"""The fork study's reading (`fork_feed_starved`, docs/FORK.md): starved targets fed their held-out pairs.

Each fork is read against its own parent, seed by seed: *before* is the parent at the fork step, *after* the
fork's last evaluation (engine/sweep/report/forks.py `before_after`, the report's interventions table), and
the parent's own last evaluation is the unfed control over the same steps (a fork that changes nothing goes
on bit for bit as its parent does).
"""

from __future__ import annotations

import math

from engine.claims.claim import Claim
from engine.claims.readings import Reading, direction, part, spread
from engine.records.group_dir import Group, Member
from engine.rundir import read_metrics
from engine.sweep.report.forks import before_after

METRIC = "val_acc_target"  # the starved target tokens' held-out accuracy
FED = (("feed", "fed their pairs"), ("feed_rescaled", "fed, their rows first rescaled to the ring"))


def _last(group: Group, m: Member) -> float:
    rows = read_metrics(group.member_dir(m))
    return next((v for r in reversed(rows) if math.isfinite(v := r.get(METRIC, math.nan))), math.nan)


def fork_feed(group: Group) -> Reading:
    """§4.2 (ours): a starved token's plateau is lifted by giving it pairs. Per fork arm, paired by seed: the
    targets' accuracy rises from the fork step to the fork's end, and ends above the unfed parent's."""
    res = group.results()
    parents = {m.id: m for m in group.members if not m.fork_of}
    parts, values = [], {}
    for arm, words in FED:
        forks = [m for m in group.members if m.arm == arm and m.id in res and res[m.id].ended]
        ba = [(m, before_after(group, m, [METRIC]).get(METRIC)) for m in forks]
        pairs = [(m, x) for m, x in ba if x is not None and m.fork_of in parents]
        rise = direction([a - b for _, (b, a) in pairs])
        over = [a - _last(group, parents[m.fork_of]) for m, (_, a) in pairs]
        above = direction([x for x in over if math.isfinite(x)])
        parts.append(part(f"{words}: the targets rise", rise, f"after above before in {rise.k_of_n('seeds')}"))
        parts.append(part(f"{words}: above the unfed parent", above, f"above in {above.k_of_n('seeds')}"))
        values[f"{arm}_before"] = spread([b for _, (b, _) in pairs])
        values[f"{arm}_after"] = spread([a for _, (_, a) in pairs])
        values[f"{arm}_over_control"] = spread([x for x in over if math.isfinite(x)], sign=True)
    # the unfed control over the same steps: each parent from its fork step (the feed fork's before) to its end
    control = []
    for m in group.members:
        at = before_after(group, m, [METRIC]).get(METRIC) if m.arm == "feed" and m.fork_of in parents else None
        if at is not None and math.isfinite(end := _last(group, parents[m.fork_of])):
            control.append((at[0], end))
    values["control_end"] = spread([c for _, c in control])
    values["control_change"] = spread([c - b for b, c in control], sign=True)
    head = (
        f"targets' val accuracy, fork step → end: fed {values['feed_before']} → {values['feed_after']}; "
        f"the unfed parent ends at {values['control_end']}"
    )
    n = len(group.spec.seeds)
    return Reading(parts, head, parts[1].evidence, f"{n} × 1 ({group.base.data.op})", values)


CLAIM = Claim(
    "forks",
    "",
    "Forks: starved tokens fed their pairs at the plateau (ours)",
    "fork_feed_starved",
    "supported",
    "fed targets rise ({p0}) and end above the unfed parent ({p1}); rows rescaled first: the same ({p3}), "
    "both at the ceiling",
    tail=5,
    ours=True,
    read=fork_feed,
    row=250,
)
