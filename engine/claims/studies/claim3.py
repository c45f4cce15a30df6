"""Study: Adam-LR groks faster than Adam on all four tasks (Fig. 6)."""

from __future__ import annotations

import math

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    Row,
    by_seed,
    geo_ratio,
    ops_of,
    part,
    rows,
    seeds_by_tasks,
    select,
    sooner,
)
from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group


def _never_fits(r: Row) -> bool:
    """The member never reached 99% train accuracy (results' memorized_step): a failure of its arm to train."""
    return r.raw.memorized_step is None


def fig6(group: Group) -> Reading:
    """Fig. 6 (§4.3): Adam-LR (c = 10) reaches 95% val in fewer steps than Adam on every task. A pair where
    neither reaches 95% val cannot tell, unless Adam-LR's member never fits its training set while Adam's does:
    that is a failure of Adam-LR's arm, and the pair counts against it."""
    rs = rows(group)
    parts, pooled, agree, states, why = [], [], [], {}, {}
    for op in ops_of(group):
        failed: list[str] = []
        fast, slow = select(rs, "adamlr", data__op=op), select(rs, "adam", data__op=op)
        o, both, _bounds = sooner(fast, slow)
        by = by_seed(slow)
        paired = [r for r in fast if r.member.seed in by]
        ag, op_ = list(o.agree), list(o.opposite)
        notes = []
        for i, r in enumerate(paired):
            other = by[r.member.seed]
            if ag[i] is None and _never_fits(r) and not _never_fits(other):
                ag[i] = False
                train, val = r.final.get("train_acc", math.nan), other.final.get("val_acc", math.nan)
                notes.append(
                    f"Adam-LR seed {r.member.seed} never fits its training set (train {train:.3f}), where Adam's "
                    f"reaches val {val:.3f}"
                )
                failed.append(f"Adam-LR seed {r.member.seed} never fits its training set")
        o = Outcome(ag, op_)
        pooled += both
        agree += ag
        note = f"; Adam-LR/Adam {geo_ratio(both)}" if both else ""
        named = "".join(f"; {n}" for n in notes)
        parts.append(part(f"faster on {op}", o, f"{o.k_of_n('seeds fewer steps')}{note}{named}"))
        states[op] = o.state
        why[op] = "; ".join(failed) or f"Adam-LR sooner in {o.k_of_n('seeds')}"
    allp = Outcome(agree)
    held = [op for op in ops_of(group) if states[op] == "holds"]
    values = {
        "pooled": geo_ratio(pooled),
        "holds_on": ", ".join(held) or "no task",
        # each task that does not hold, with its own state: a task unread and one that fails read apart
        "not_on": "; ".join(f"{states[op]} on {op} ({why[op]})" for op in ops_of(group) if op not in held) or "none",
    }
    head = f"Adam-LR / Adam, steps to 95% val, pairs where both reached: {values['pooled']}"
    return Reading(parts, head, allp.k_of_n("pairs fewer"), seeds_by_tasks(group), values)


CLAIM = Claim(
    "claim3",
    "3",
    "Adam-LR groks faster than Adam on all four tasks (Fig. 6)",
    "fig6_optimizers",
    "partly",
    "faster in every seed on {holds_on}; {not_on}",
    tail=3,
    metrics="val_acc,train_acc",
    figure="fig6",
    read=fig6,
    row=30,
    paper=3,
    plan="3: Adam-LR groks faster than Adam on all four tasks (Fig. 6)",
)
