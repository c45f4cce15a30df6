"""Study: Grokking across lr × batch (paper, Figs. 12–13)."""

from __future__ import annotations

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


def fig12(group: Group) -> Reading:
    """Figs. 12-13 (App. C.4): grokking, a delay between fitting and 95% val, across lr × batch: a part per
    batch size, holding when every member at that batch (both lrs) generalizes after a delay. A member that
    does not reach 95% val by the budget cannot show it, so its batch is unread. The lrs' order is a value."""
    rs = rows(group)
    parts = []
    for bs in group.spec.grid["train.batch_size"]:
        cell = select(rs, train__batch_size=bs)
        o = Outcome([(float(r.raw.get("grokking_delay") or 0) > 0) if r.gen is not None else None for r in cell])
        reached = sum(r.gen is not None for r in cell)
        delayed = sum(x is True for x in o.agree)
        note = (
            f"{reached} of {len(cell)} members reach 95% val by step {budget_of(cell)}, {delayed} of them after a delay"
        )
        parts.append(part(f"grokking at batch {bs}", o, note))
    lrs = sorted({float(v) for v in group.spec.grid["optim.lr"]})
    agree: list[bool | None] = []
    for bs in group.spec.grid["train.batch_size"]:
        hi, lo = select(rs, optim__lr=lrs[-1], train__batch_size=bs), select(rs, optim__lr=lrs[0], train__batch_size=bs)
        agree += list(sooner(hi, lo)[0].agree)
    dl = [float(r.raw["grokking_delay"]) for r in rs if r.raw.get("grokking_delay")]
    values = {
        "delay": f"{min(dl):,.0f}–{max(dl):,.0f}" if dl else "-",
        "generalized": generalized(rs),
        "lr_sooner": Outcome(agree).k_of_n("pairs"),
        "lr_hi": f"{lrs[-1]:g}",
        "lr_lo": f"{lrs[0]:g}",
    }
    head = f"{values['generalized']} members reach 95% val, each after a delay of {values['delay']} steps"
    return Reading(
        parts,
        head,
        f"lr {lrs[-1]:g} sooner than {lrs[0]:g} in {values['lr_sooner']}",
        f"{n_seeds(group)} × 1 (mul) × 6 cells",
        values,
    )


CLAIM = Claim(
    "fig12",
    "",
    "Grokking across lr × batch (paper, Figs. 12–13)",
    "fig12_lr_batch",
    "partly",
    "grokking in every member at the two larger batches; the smallest unread ({p0})",
    earlier="reproduced",
    figure="fig12",
    read=fig12,
    row=130,
    paper=9,
    plan="(Figs. 12-13) grokking persists across lr × batch",
)
