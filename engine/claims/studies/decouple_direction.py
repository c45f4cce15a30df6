"""Study: A starved row's direction (ours, §4.2): does the one pair set it?"""

from __future__ import annotations

from engine.claims.cause_pairs import _pooled, _tasks
from engine.claims.claim import Claim
from engine.claims.readings import Reading, direction, part
from engine.sweep.spec import Group

DIRECTIONS = (  # decouple_direction's fork arms (presets/decouple_direction.toml): the direction each row is given
    ("rescaled", "in its own direction", True),
    ("turned_random", "in a random direction", False),
    ("turned_other", "in another token's direction", False),
    ("turned_memorized", "in its direction at memorization", False),
)


def decouple_direction(group: Group) -> Reading:
    """§4.2 (ours, issue 43 item 4): a starved target row set at the ring's radius, one frozen step: does it
    recover in its own direction and in no other? Each fork against its parent at the fork step, per seed."""
    from engine.sweep.report.tables import member_finals

    finals = member_finals(group, ["val_acc_target"], 1)
    at = {m.id: f["val_acc_target"] for m in group.members if (f := finals.get(m.id)) and "val_acc_target" in f}
    parts, values, after_own = [], {}, []
    for suffix, name, rises in DIRECTIONS:
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
            part(f"the targets' accuracy {word} {name}", o, f"{o.k_of_n('pairs')}; after, pooled: {_pooled(after)}")
        )
    values["chance"] = f"{1 / group.base.data.p:.3f}"
    head = (
        f"targets' val accuracy one frozen step after: own direction {values['rescaled']}, random "
        f"{values['turned_random']} (chance {values['chance']})"
    )
    n = sum(1 for m in group.members if m.fork_of and m.arm.endswith("_rescaled") and m.id in at)
    return Reading(
        parts, head, f"{sum(v > 0.5 for v in after_own)} of {n} own-direction pairs above 0.5", _tasks(group), values
    )


CLAIM = Claim(
    "decouple_direction",
    "",
    "A starved row's direction (ours, §4.2): does the one pair set it?",
    "decouple_direction",
    "supported",
    "at the ring's radius the target rows recover in their own direction ({rescaled_k} rise) and fall "
    "in a random ({turned_random_k} fall), another token's or their memorized direction",
    tail=1,
    metrics="val_acc_target",
    figure="decouple_direction",
    ours=True,
    tables=("interventions",),
    sweep_args=" --parents DECOUPLE_CAUSE_GROUP",
    read=decouple_direction,
    row=200,
)
