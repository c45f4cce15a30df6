"""Study: Adam-LR groks faster than Adam on all four tasks (Fig. 6)."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    geo_ratio,
    ops_of,
    part,
    rows,
    seeds_by_tasks,
    select,
    sooner,
)
from engine.claims.verdicts import Outcome
from engine.sweep.spec import Group


def fig6(group: Group) -> Reading:
    """Fig. 6 (§4.3): Adam-LR (c = 10) reaches 95% val in fewer steps than Adam on every task."""
    rs = rows(group)
    parts, pooled, agree = [], [], []
    for op in ops_of(group):
        o, both, _bounds = sooner(select(rs, "adamlr", data__op=op), select(rs, "adam", data__op=op))
        pooled += both
        agree += list(o.agree)
        note = f"; Adam-LR/Adam {geo_ratio(both)}" if both else ""
        parts.append(part(f"faster on {op}", o, f"{o.k_of_n('seeds fewer steps')}{note}"))
    allp = Outcome(agree)
    held = [op for op, p in zip(ops_of(group), parts, strict=True) if p.state == "holds"]
    values = {
        "pooled": geo_ratio(pooled),
        "holds_on": ", ".join(held) or "no task",
        "not_on": ", ".join(op for op in ops_of(group) if op not in held) or "none",
    }
    head = f"Adam-LR / Adam, steps to 95% val, pairs where both reached: {values['pooled']}"
    return Reading(parts, head, allp.k_of_n("pairs fewer"), seeds_by_tasks(group), values)


CLAIM = Claim(
    "claim3",
    "3",
    "Adam-LR groks faster than Adam on all four tasks (Fig. 6)",
    "fig6_optimizers",
    "partly",
    "faster in every seed on {holds_on}; not shown on {not_on}",
    tail=3,
    metrics="val_acc,train_acc",
    figure="fig6",
    read=fig6,
    row=30,
    paper=3,
    plan="3: Adam-LR groks faster than Adam on all four tasks (Fig. 6)",
)
