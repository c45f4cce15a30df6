"""Study: Adaptive Adam-LR, c from eq. 24 (paper, Prop. 4.1)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.claims.claim import Claim
from engine.claims.fix_pairs import C_KEYS, _c_logged, _members, _mismatch, _none, _pairs
from engine.claims.readings import (
    Reading,
    Row,
    budget_of,
    generalized,
    geo_ratio,
    ops_of,
    part,
    rows,
    select,
    sooner,
)
from engine.claims.verdicts import HOLDS, Outcome, Part
from engine.records.group_dir import Group


def no_later(a: Sequence[Row], b: Sequence[Row]) -> Outcome:
    """Does arm `a` reach 95% val no later than arm `b`, paired by seed? A tie agrees (both reached at the same
    evaluation, the steps' grain); only `a` reached agrees, only `b` is against, neither cannot tell."""
    return sooner(a, b, tie_agrees=True)[0]


BASE, FIXED = "adam", "c10"
READINGS = (  # (arm, key in the values, words): the two readings of "adaptive" (engine/train/adaptive.py)
    ("adaptive_once", "once", "c computed once"),
    ("adaptive_every", "every", "c recomputed"),
)


def adaptive(group: Group) -> Reading:
    """Prop. 4.1 and eq. 24 (§4.3, App. B) with Fig. 6's caption: the adaptive ratio c = η_E/η_W ∝
    σmax(E)/σmax(W) · f_W/f_E accelerates convergence. Per task, each reading of "adaptive" (c computed once at
    step 0, c recomputed during training) reaches 95% val in fewer steps than plain Adam, paired by seed; and,
    pooled over the tasks, no later than the fixed c = 10 that §4.3 sets in its place ("in practice, we set
    c = 10"). The arms of a pair differ in how c is set alone."""
    rs = rows(group)
    ops = ops_of(group)
    parts: list[Part] = []
    values: dict[str, str] = {}
    bad = 0
    for arm, key, words in READINGS:
        held, agree, ratios = [], [], []
        for op in ops:
            a, b, n = _pairs(group, select(rs, arm, data__op=op), select(rs, BASE, data__op=op), C_KEYS)
            bad += n
            text = f"{words}: sooner than Adam on {op}"
            if not a:
                parts.append(_none(text, "how c is set"))
                continue
            o, both, _ = sooner(a, b)
            agree += list(o.agree)
            ratios += both
            note = f"; steps over Adam's where both reached {geo_ratio(both)}" if both else ""
            parts.append(part(text, o, f"{o.k_of_n('seeds fewer steps')}{note}"))
            if o.state == HOLDS:
                held.append(op)
        fixed_agree: list[bool | None] = []
        fixed_opp: list[bool] = []
        by_task = []
        for op in ops:
            a, b, n = _pairs(group, select(rs, arm, data__op=op), select(rs, FIXED, data__op=op), C_KEYS)
            bad += n
            o = no_later(a, b)
            fixed_agree += list(o.agree)
            fixed_opp += list(o.opposite)
            by_task.append(f"{op} {o.k_of_n()}")
        fixed = Outcome(fixed_agree, fixed_opp)
        text = f"{words}: no later than c = 10"
        if fixed_agree:
            parts.append(part(text, fixed, f"{fixed.k_of_n('pairs no later')} over the tasks ({', '.join(by_task)})"))
        else:
            parts.append(_none(text, "how c is set"))
        mine = select(rs, arm)
        values |= {
            f"{key}_on": ", ".join(held) or "no task",
            f"{key}_not": ", ".join(op for op in ops if op not in held) or "none",
            f"{key}_k": Outcome(agree).k_of_n(),
            f"{key}_ratio": geo_ratio(ratios),
            f"{key}_c10_k": fixed.k_of_n(),
            f"{key}_reach": generalized(mine),
        }
        cs, logged, clamped = _c_logged(group, mine)
        values |= {f"{key}_c_{k}": _members(v) for k, v in cs.items()}
        values[f"{key}_clamped"] = f"{clamped} of {logged}"
    if bad:
        parts.append(_mismatch(bad, "how c is set"))
    c10_agree, c10_both = [], []
    for op in ops:
        o, both, _ = sooner(select(rs, FIXED, data__op=op), select(rs, BASE, data__op=op))
        c10_agree += list(o.agree)
        c10_both += both
    unfit = [r for r in rs if not r.raw.get("memorized_step")]
    values |= {
        "c10_k": Outcome(c10_agree).k_of_n(),
        "c10_ratio": geo_ratio(c10_both),
        "adam_reach": generalized(select(rs, BASE)),
        "c10_reach": generalized(select(rs, FIXED)),
        "unfit": ", ".join(
            f"{r.member.arm} on {r.member.values.get('data.op', '')} (seed {r.member.seed})" for r in unfit
        )
        or "none",
        "budget": budget_of(rs),
    }
    head = (
        f"steps to 95% val over Adam's, pairs where both reached: c once {values['once_ratio']}, "
        f"recomputed {values['every_ratio']}, c = 10 {values['c10_ratio']}"
    )
    k = f"sooner than Adam: c once {values['once_k']}, recomputed {values['every_k']} pairs"
    return Reading(parts, head, k, f"{len(group.spec.seeds)} × {len(ops)} ({', '.join(ops)})", values)


CLAIM = Claim(
    "adaptive",
    "",
    "Adaptive Adam-LR, c from eq. 24 (paper, Prop. 4.1)",
    "fig6_adaptive",
    "partly",
    "c once: sooner than Adam in every seed on {once_on}, not on {once_not}; c recomputed: on {every_on}; "
    "no later than c = 10 in {once_c10_k} pairs (once), {every_c10_k} (recomputed)",
    tail=3,
    metrics="val_acc,train_acc",
    figure="fig6_adaptive",
    tables=("every cell", "by arm", "final value"),
    read=adaptive,
    row=100,
    paper=3,
    plan="3: adaptive Adam-LR (c once, c recomputed) against Adam and c = 10 (Fig. 6, Prop. 4.1)",
)
