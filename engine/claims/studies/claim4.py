"""Study: Small c under-updates, large c unstable, c ≈ 10 balances (Fig. 5)."""

from __future__ import annotations

import itertools
import math

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    Row,
    beside,
    budget_of,
    diffs,
    direction,
    median,
    n_seeds,
    ops_of,
    part,
    rows,
    select,
    spread,
)
from engine.claims.verdicts import GUARD, UNREAD, Outcome, Part
from engine.records.group_dir import Group
from engine.rundir import read_metrics
from engine.status import Status
from engine.train.phases import MEMORIZED_ACC

BALANCE = 10.0  # §4.3: c = 10 balances the two learning rates
LONG = "fig5_c_long"  # kept beside: the large c and two references over 3,000 steps with no stop rule


FIT = MEMORIZED_ACC  # a member fits the training set where train accuracy reaches this (results' memorized_step)
LOST = 0.9  # a fitted member loses the fit where train accuracy falls below this at a later evaluation
SPIKE = 2.0  # or where train loss rises to this many times its value at the fit
AFTER = 3  # evaluations after the fit that a member needs to show either (300 steps at eval_every 100)
STALL = 0.99  # a member stalls at chance where its train loss stays above this share of ln p from step 100 on


def _after_fit(group: Group, r: Row) -> tuple[bool | None, int]:
    return after_fit(read_metrics(group.member_dir(r.member)))


def after_fit(rows: list[dict[str, float]]) -> tuple[bool | None, int]:
    """Whether a fitted member loses the fit or its loss spikes after it (None: it never fits, or fewer than
    AFTER evaluations follow its fit), and how many evaluations follow the fit; `rows`: its metrics.csv."""
    log = [x for x in rows if math.isfinite(x.get("train_acc", math.nan))]
    at = next((i for i, x in enumerate(log) if x["train_acc"] >= FIT), None)
    if at is None:
        return None, 0
    rest = log[at + 1 :]
    if len(rest) < AFTER:
        return None, len(rest)
    lost = any(x["train_acc"] < LOST for x in rest)
    spike = any(x.get("train_loss", 0.0) > SPIKE * log[at].get("train_loss", math.inf) for x in rest)
    return lost or spike, len(rest)


def _stalls(group: Group, r: Row, p: int) -> bool:
    """Train loss at chance (ln p) at every evaluation from step 100 on: the member never left it."""
    log = [x for x in read_metrics(group.member_dir(r.member)) if x["step"] >= 100 and "train_loss" in x]
    return bool(log) and all(x["train_loss"] >= STALL * math.log(p) for x in log)


def _readable(rs: list[Row], shown: dict[str, bool | None]) -> tuple[list[bool], str]:
    """Per member of `rs` that fits with AFTER evaluations after its fit: whether it loses the fit or spikes after
    it (`shown`, by member); members that never fit, or fit too late to show it, are not counted but named in the
    evidence: how many fit, how many of those can show it, and how many do."""
    readable = [a for r in rs if (a := shown[r.member.id]) is not None]
    fitted = sum(r.raw.memorized_step is not None for r in rs)
    text = (
        f"{fitted} of {len(rs)} members fit the training set; {len(readable)} of those have the {AFTER} evaluations "
        f"after the fit where a loss of the fit or a loss spike could show"
        + (f", and {sum(readable)} of those show one" if readable else "")
    )
    return readable, text


def _state(agree: list[bool]) -> str:
    return Outcome(agree, [not a for a in agree]).state if agree else UNREAD


def _per_c(rs: list[Row], cs: list[float], shown: dict[str, bool | None], stalled: dict[str, bool]) -> str:
    """Per c: members that fit, of those that can show it how many lose the fit or spike, and how many stall."""
    out = []
    for c in cs:
        mine = select(rs, optim__lr_ratio=c)
        readable, _ = _readable(mine, shown)
        fit = sum(r.raw.memorized_step is not None for r in mine)
        stall = sum(stalled[r.member.id] for r in mine)
        out.append(
            f"c = {c:g}: {fit} of {len(mine)} fit, {sum(readable)} of {len(readable)} readable lose it or spike, "
            f"{stall} at chance loss from step 100 on"
        )
    return "; ".join(out)


def _instability(group: Group) -> tuple[list[Part], dict[str, str]]:
    """§4.3's "large c is unstable", read where a budget lets it show: on fig5_c_long kept beside this group (3,000
    steps, no stop rule), else on this group. A fitted member at c > 10 loses the fit or spikes after it (the
    part); the fitted members at c <= 10 keep theirs (a guard: were they as unstable, it would not be large c's)."""
    src = beside(group, LONG) or group
    rs = rows(src)
    shown = {r.member.id: _after_fit(src, r)[0] for r in rs}  # each member's log read once
    stalled = {r.member.id: _stalls(src, r, src.base.data.p) for r in rs}
    cs = sorted({float(r.member.values["optim.lr_ratio"]) for r in rs})
    large = [c for c in cs if c > BALANCE]
    top = [r for c in large for r in select(rs, optim__lr_ratio=c)]
    ref = [r for c in cs if c <= BALANCE for r in select(rs, optim__lr_ratio=c)]
    where = f"{budget_of(rs)} steps" + (f", {LONG}" if src is not group else "")
    unstable, text = _readable(top, shown)
    parts = [Part(f"large c is unstable (c = {', '.join(f'{c:g}' for c in large)}; {where})", _state(unstable), text)]
    values = {
        "unstable_k": f"{sum(unstable)} of {len(unstable)}" if unstable else "none readable",
        "unstable_where": where,
        "long_per_c": _per_c(rs, cs, shown, stalled),
        "long_stalls": f"{sum(stalled[r.member.id] for r in top)} of {len(top)}",
    }
    if ref:
        kept, ref_text = _readable(ref, shown)
        refs = ", ".join(f"{c:g}" for c in cs if c <= BALANCE)
        text = f"fitted members at c = {refs} keep the fit ({where})"
        parts.append(Part(text, _state([not a for a in kept]), ref_text, role=GUARD))
    return parts, values


def fig5(group: Group) -> Reading:
    """Fig. 5 (§4.3): small c under-updates E (‖ΔE‖/‖ΔW‖ over the first 100 steps below c = 1's), large c is
    unstable (a fitted member loses the fit, or its loss spikes after the fit: under-updating cannot do either),
    c near 10 balances (judged: 600 steps)."""
    rs = rows(group)
    cs = sorted({float(r.member.values["optim.lr_ratio"]) for r in rs})
    small, one, big = cs[0], 1.0, cs[-1]
    d: list[float] = []  # paired by seed within each task
    for op in ops_of(group):
        d += diffs(
            select(rs, optim__lr_ratio=small, data__op=op),
            select(rs, optim__lr_ratio=one, data__op=op),
            lambda r: r.first.get("update_ratio"),
        )
    under = direction(d, positive=False)
    unstable_parts, long_values = _instability(group)
    p = group.base.data.p
    fits = {c: sum(r.raw.memorized_step is not None for r in select(rs, optim__lr_ratio=c)) for c in cs}
    stalls = {c: sum(_stalls(group, r, p) for r in select(rs, optim__lr_ratio=c)) for c in cs}
    n_c = {c: len(select(rs, optim__lr_ratio=c)) for c in cs}
    parts = [
        part(f"small c under-updates E (c = {small:g} against 1)", under, f"ratio lower in {under.k_of_n('pairs')}"),
        *unstable_parts,
        Part(
            "c near 10 balances",
            "unread",
            f"final val after {budget_of(rs)} steps",
            "a balance is a judgement over the whole curve of c; the budget ends before most members generalize",
        ),
    ]
    first = {
        c: [r.first["update_ratio"] for r in select(rs, optim__lr_ratio=c) if "update_ratio" in r.first]
        for c in (small, one)
    }
    late: list[float] = []  # the same pairs at the last evaluation
    for op in ops_of(group):
        late += diffs(
            select(rs, optim__lr_ratio=small, data__op=op),
            select(rs, optim__lr_ratio=one, data__op=op),
            lambda r: r.final.get("update_ratio"),
        )
    last = {c: median([r.final["update_ratio"] for r in select(rs, optim__lr_ratio=c)]) for c in cs}
    low = [c for c in cs if c <= one]
    diverged = sum(r.status == Status.DIVERGED for r in rs)
    small_cs = [c for c in cs if c <= BALANCE / 2]  # well below the balance: none of these stall
    values = {
        # pooled over the four tasks: a range, never a t-interval (the tasks are not seeds)
        "small": spread(first[small], ".2f", pooled=True),
        "one": spread(first[one], ".2f", pooled=True),
        "diverged": f"{diverged} of {len(rs)}",
        "late_k": direction(late, positive=False).k_of_n("pairs"),
        # the median ratio at the last evaluation per c up to 1: in order of c or not
        "late_low": ", ".join(f"c = {c:g} {last[c]:.2f}" for c in low),
        "late_ordered": "in order of c"
        if all(a <= b for a, b in itertools.pairwise(last[c] for c in low))
        else "not in order of c",
        "fits": ", ".join(f"c = {c:g} {fits[c]}" for c in cs),
        "stalls": ", ".join(f"c = {c:g} {stalls[c]}" for c in cs if stalls[c]) or "none",
        "stalls_low": f"{sum(stalls[c] for c in small_cs)} of {sum(n_c[c] for c in small_cs)}",
        "top_stalls": f"{stalls[big]} of {n_c[big]}",
        "n_c": str(n_c[big]),
        "after": str(AFTER),
        **long_values,
    }
    head = (
        f"‖ΔE‖/‖ΔW‖ over steps 0–100: c = {small:g} {values['small']}, c = 1 {values['one']}; "
        f"at chance train loss from step 100 on: c = {big:g} {values['top_stalls']}"
    )
    return Reading(
        parts,
        head,
        under.k_of_n("pairs lower at small c"),
        f"{n_seeds(group)} × {len(ops_of(group))} × {len(cs)} c",
        values,
    )


CLAIM = Claim(
    "claim4",
    "4",
    "Small c under-updates, large c unstable, c ≈ 10 balances (Fig. 5)",
    "fig5_c_sensitivity",
    "partly",
    "small c under-updates E ({p0}); at c > 10 fitted members keep the fit ({unstable_k} lose it), {long_stalls} "
    "never leave chance loss; balance unread",
    tail=5,
    figure="fig5",
    tables=("by optim.lr_ratio", "by data.op", "probes"),
    read=fig5,
    row=40,
    paper=4,
    plan="4: small c under-updates, large c unstable (Fig. 5)",
)
