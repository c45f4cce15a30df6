"""Study: Small c under-updates, large c unstable, c ≈ 10 balances (Fig. 5)."""

from __future__ import annotations

import itertools

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
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
from engine.claims.verdicts import Outcome, Part
from engine.sweep.spec import Group


def fig5(group: Group) -> Reading:
    """Fig. 5 (§4.3): small c under-updates E (‖ΔE‖/‖ΔW‖ over the first 100 steps below c = 1's), large c is
    unstable (diverges), c near 10 balances (judged: 600 steps)."""
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
    top = select(rs, optim__lr_ratio=big)
    unstable = Outcome([r.status == "diverged" for r in top], [r.status != "diverged" for r in top])
    diverged = sum(r.status == "diverged" for r in rs)
    parts = [
        part(f"small c under-updates E (c = {small:g} against 1)", under, f"ratio lower in {under.k_of_n('pairs')}"),
        part(f"large c is unstable (c = {big:g})", unstable, f"{unstable.k_of_n('members')} diverged"),
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
    values = {
        "small": spread(first[small], ".2f"),
        "one": spread(first[one], ".2f"),
        "diverged": f"{diverged} of {len(rs)}",
        "late_k": direction(late, positive=False).k_of_n("pairs"),
        # the median ratio at the last evaluation per c up to 1: in order of c or not
        "late_low": ", ".join(f"c = {c:g} {last[c]:.2f}" for c in low),
        "late_ordered": "in order of c"
        if all(a <= b for a, b in itertools.pairwise(last[c] for c in low))
        else "not in order of c",
    }
    head = (
        f"‖ΔE‖/‖ΔW‖ over steps 0–100: c = {small:g} {values['small']}, c = 1 {values['one']}; "
        f"{values['diverged']} members diverged"
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
    "c = 0.1 moves E less than c = 1 over steps 0–100 ({p0}); no member diverges at c = 32 ({p1}); the balance unread",
    tail=5,
    figure="fig5",
    tables=("by optim.lr_ratio", "by data.op", "probes"),
    read=fig5,
    row=40,
    paper=4,
    plan="4: small c under-updates, large c unstable (Fig. 5)",
)
