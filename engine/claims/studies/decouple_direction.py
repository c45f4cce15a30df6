"""Study: A starved row's direction (ours, §4.2): set at the ring's radius, only its direction at the fork
restores it."""

from __future__ import annotations

import statistics

from engine.claims.cause_pairs import _pooled, _tasks
from engine.claims.claim import Claim
from engine.claims.readings import Reading, direction, part
from engine.claims.verdicts import CONTROL
from engine.records.group_dir import Group
from engine.records.stats import range_text
from engine.rundir import read_summary

DIRECTIONS = (  # decouple_direction's fork arms (presets/decouple_direction.toml): the direction each row is given
    ("rescaled", "in its own direction", True, ""),
    # a random direction, or another token's, cannot give the targets' answers: a check of the fork, not of the claim
    ("turned_random", "in a random direction", False, CONTROL),
    ("turned_other", "in another token's direction", False, CONTROL),
    # the row's own direction at memorization could have restored it: the part that could fail
    ("turned_memorized", "in its direction at memorization", False, ""),
)
STARVED = "r0.01"  # the cell whose parents keep their data and have their draws cut


def _parents(group: Group, cell: str) -> list[tuple[float, float]]:
    """(batch share, mean training pairs per target) of the parents of a cell (arms named OPT_CELL)."""
    out = []
    for m in group.members:
        if m.fork_of or m.arm.split("_", 1)[-1] != cell:
            continue
        s = read_summary(group.member_dir(m))
        if s.target_batch_share is not None and s.target_pairs:
            out.append((s.target_batch_share, statistics.fmean(s.target_pairs)))
    return out


def decouple_direction(group: Group) -> Reading:
    """§4.2 (ours, issue 43 item 4): a starved target row set at the ring's radius, one frozen step: it recovers
    in its direction at the fork, not in its direction at memorization. Each fork against its parent at the fork
    step, per seed. A random direction and another token's are controls (they cannot restore the targets)."""
    from engine.sweep.report.tables import member_finals

    finals = member_finals(group, ["val_acc_target"], 1)
    at = {m.id: f["val_acc_target"] for m in group.members if (f := finals.get(m.id)) and "val_acc_target" in f}
    parts, values, after_own = [], {}, []
    shared = len({m.arm.split("_", 1)[0] for m in group.members if not m.fork_of})  # optimizers sharing each split
    for suffix, name, rises, role in DIRECTIONS:
        forks = [m for m in group.members if m.fork_of and m.arm.endswith("_" + suffix) and m.id in at]
        pairs = [(at[m.fork_of], at[m.id]) for m in forks if m.fork_of in at]
        o = direction([b - a for a, b in pairs], rises)
        after = [b for _, b in pairs]
        values[suffix] = _pooled(after)
        values[f"{suffix}_k"] = o.k_of_n("pairs")
        if rises:
            after_own = after
        word = "rises" if rises else "falls"
        parts.append(
            part(
                f"the targets' accuracy {word} {name}",
                o,
                f"{o.k_of_n('pairs', shared)}; after, pooled: {_pooled(after)}",
                role=role,
            )
        )
    values["chance"] = f"{1 / group.base.data.p:.3f}"
    starved = _parents(group, STARVED)
    shares, npairs = [s for s, _ in starved], [n for _, n in starved]
    values["starved_share"] = (
        f"{statistics.fmean(shares):.3f} ({range_text(min(shares), max(shares), '.3f')}, n = {len(shares)})"
        if shares
        else "-"
    )
    values["starved_pairs"] = f"{statistics.fmean(npairs):.0f}" if npairs else "-"
    head = (
        f"targets' val accuracy one frozen step after: own direction {values['rescaled']}, at memorization "
        f"{values['turned_memorized']} (chance {values['chance']})"
    )
    n = sum(1 for m in group.members if m.fork_of and m.arm.endswith("_rescaled") and m.id in at)
    return Reading(
        parts, head, f"{sum(v > 0.5 for v in after_own)} of {n} own-direction pairs above 0.5", _tasks(group), values
    )


CLAIM = Claim(
    "decouple_direction",
    "",
    "A starved row's direction (ours, §4.2): its direction at the fork, not at memorization, restores it",
    "decouple_direction",
    "supported",
    "at the ring's radius the targets recover in their own direction ({rescaled_k} rise), not in their "
    "direction at M ({turned_memorized_k} fall); two controls not counted; whether one pair sets it: open",
    tail=1,
    metrics="val_acc_target",
    figure="decouple_direction",
    ours=True,
    tables=("interventions",),
    sweep_args=" --parents DECOUPLE_CAUSE_GROUP",
    read=decouple_direction,
    row=200,
)
