"""Study: Time to converge against weight decay and init scale (paper, §4.1, eqs. 8–9)."""

from __future__ import annotations

import itertools

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    budget_of,
    generalized,
    n_seeds,
    part,
    rows,
    select,
    sooner,
)
from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group


def _adjacent(group: Group, key: str, other: str, faster_high: bool) -> tuple[Outcome, list[str]]:
    """Per value of `other`, each adjacent pair of `key`'s values, paired by seed: is the higher value faster
    (`faster_high`) or slower? The evidence per pair of values."""
    rs = rows(group)
    vals = sorted({float(v) for v in group.spec.grid[key]})
    agree: list[bool | None] = []
    opp: list[bool] = []
    notes = []
    kk, ok = key.replace(".", "__"), other.replace(".", "__")
    for ov in group.spec.grid[other]:
        for lo, hi in itertools.pairwise(vals):
            a, b = select(rs, **{kk: hi, ok: ov}), select(rs, **{kk: lo, ok: ov})
            o, _, _ = sooner(a, b) if faster_high else sooner(b, a)
            agree += list(o.agree)
            opp += list(o.opposite)
            notes.append(f"{other.split('.')[-1]} {ov}, {lo:g}→{hi:g}: {o.k_of_n()}")
    return Outcome(agree, opp), notes


def wd_init(group: Group) -> Reading:
    """Eqs. 8-9 (§4.1): time to converge falls with weight decay and grows with the initial scale α, each
    adjacent pair of values at every value of the other factor, paired by seed."""
    wd, wd_notes = _adjacent(group, "optim.weight_decay", "model.embed_init_scale", faster_high=True)
    al, al_notes = _adjacent(group, "model.embed_init_scale", "optim.weight_decay", faster_high=False)
    parts = [
        part("larger weight decay, sooner", wd, "; ".join(wd_notes)),
        part("larger initial scale, later", al, "; ".join(al_notes)),
    ]
    rs = rows(group)
    values = {"generalized": generalized(rs), "budget": budget_of(rs)}
    head = (
        f"{values['generalized']} members reach 95% val by step {values['budget']}; "
        f"pairs in the direction: wd {wd.k_of_n()}, α {al.k_of_n()}"
    )
    return Reading(
        parts, head, f"wd {wd.k_of_n()}; α {al.k_of_n()}", f"{n_seeds(group)} × 1 (mul) × 3 × 3 grid", values
    )


CLAIM = Claim(
    "wd_init",
    "",
    "Time to converge against weight decay and init scale (paper, §4.1, eqs. 8–9)",
    "wd_init",
    "not reproduced",
    "larger λ sooner and larger α later each hold at some levels of the other factor, not at all (pairs "
    "in the headline)",
    figure="wd_init",
    read=wd_init,
    row=120,
    paper=8,
    plan="8: time to generalize against weight decay and init scale (§4.1, eqs. 8-9)",
)
