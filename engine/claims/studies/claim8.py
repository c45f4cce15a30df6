"""Study: Frozen embeddings converge slowly, small initial embeddings faster (§4.3)."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    budget_of,
    part,
    rows,
    seeds_by_tasks,
    select,
    sooner,
    spread,
)
from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group


def sec43(group: Group) -> Reading:
    """§4.3: frozen embeddings converge slowly; small initial embeddings converge faster."""
    rs = rows(group)
    default, small, frozen = select(rs, "default"), select(rs, "small_init"), select(rs, "frozen")
    faster, both, _ = sooner(small, default)
    d = [a - b for a, b in both]
    slow, _, _bounds = sooner(default, frozen)
    g = sum(r.gen is not None for r in frozen)
    b = budget_of(rs)
    if g == 0:  # slow cannot be told from never within the budget
        slow = Outcome([None] * len(frozen))
    parts = [
        part("small initial embeddings converge faster", faster, f"{faster.k_of_n('seeds')} fewer steps to 95% val"),
        part(
            "frozen embeddings converge slowly",
            slow,
            f"{g} of {len(frozen)} frozen seeds reach 95% val by step {b}"
            + (": slow cannot be told from never" if g == 0 else f"; later than default in {slow.k_of_n('seeds')}"),
        ),
    ]
    values = {
        "small_minus_default": spread(d, ",.0f", sign=True),
        "small_k": faster.k_of_n("seeds"),
        "frozen_gen": f"{g} of {len(frozen)}",
        "budget": b,
    }
    head = (
        f"small − default init, steps to 95% val: {values['small_minus_default']}; "
        f"frozen: {values['frozen_gen']} reach 95% by step {b}"
    )
    return Reading(parts, head, faster.k_of_n("seeds fewer"), seeds_by_tasks(group), values)


CLAIM = Claim(
    "claim8",
    "8",
    "Frozen embeddings converge slowly, small initial embeddings faster (§4.3)",
    "sec43_init",
    "partly",
    "small init sooner in {small_k}; frozen: {frozen_gen} generalize by step {budget}",
    tail=3,
    metrics="val_acc,train_acc",
    figure="sec43",
    read=sec43,
    row=80,
    paper=8,
    plan="8: frozen embeddings slow, small init fast (§4.3)",
)
