"""Study: A cure from step 0 (ours, §4.2-4.3): lazy rows on the starved cells."""

from __future__ import annotations

from engine.claims.cause_pairs import CELLS, TOL, _cell, _costs_nothing, _pooled, _tasks
from engine.claims.claim import Claim
from engine.claims.readings import Reading, direction, part, spread
from engine.claims.verdicts import GUARD
from engine.records.group_dir import Group
from engine.sweep.report.cures import CurePairs, cure_metrics, cure_pairs

CONTROL = "adam_r1"  # cure_decouple's control cell: every target pair drawn at the ordinary rate


def _cure_values(cs: list[CurePairs], metric: str) -> dict[str, str]:
    """Each cure arm's paired change of `metric` (mean (range, n)) and k of n higher, keyed by the arm."""
    out = {}
    for c in cs:
        d = c.changes(metric)
        arm = c.arm.replace(".", "")  # a note's {key}: no dots
        out[arm] = spread(d, sign=True)
        out[f"{arm}_k"] = f"{sum(x > 0 for x in d)} of {len(d)}"
        out[f"{arm}_reach"] = f"{sum(x for x, _ in c.reached)} → {sum(y for _, y in c.reached)} of {len(c.reached)}"
    return out


def cure_decouple(group: Group) -> Reading:
    """§4.2-4.3 (ours, issue 43 item 5): a cure from step 0 on decouple_paper's starved cells, each cure against
    its own cell paired by seed (engine/sweep/report/cures.py). The claim is lazy rows': they raise the starved
    targets and cost neither the common tokens nor the control (r = 1). The other cures are the table's."""
    from engine.sweep.report.tables import member_finals

    cs = cure_pairs(group, member_finals(group, cure_metrics(group), 5))
    lazy = [c for c in cs if c.cure == "lazy"]
    starved = [c for c in lazy if c.cell != CONTROL]
    control = [c for c in lazy if c.cell == CONTROL]
    d_target = [x for c in starved for x in c.changes("val_acc_target")]
    d_common = [x for c in starved for x in c.changes("val_acc_common")]
    d_control = [x for c in control for x in c.changes("val_acc")]
    parts = []
    for c in starved:  # one part per starved cell: a cure that works in one cell and not another says so
        d = c.changes("val_acc_target")
        o = direction(d, True)
        where = CELLS.get(_cell(c.cell), c.cell)
        parts.append(
            part(
                f"{where}, lazy rows raise the targets' accuracy",
                o,
                f"{o.k_of_n('pairs higher')}; change: {spread(d, sign=True)}",
            )
        )
    o2, o3 = _costs_nothing(d_common), _costs_nothing(d_control)
    parts += [
        part(
            f"lazy rows cost the common tokens less than {TOL:g} in the starved cells",
            o2,
            f"{o2.k_of_n('pairs')}; change, pooled: {_pooled(d_common)}",
            role=GUARD,
        ),
        part(
            f"lazy rows cost the control (r = 1) less than {TOL:g} of val accuracy",
            o3,
            f"{o3.k_of_n('pairs')}; change: {spread(d_control, sign=True)}",
            role=GUARD,
        ),
    ]
    o1 = direction(d_target, True)
    values = {f"target_{k}": v for k, v in _cure_values(cs, "val_acc_target").items()}
    values |= {f"norm_{k}": v for k, v in _cure_values(cs, "target_norm").items()}
    values |= {f"val_{k}": v for k, v in _cure_values(cs, "val_acc").items()}
    values["lazy_target"] = _pooled(d_target)
    head = f"lazy rows − untreated, the starved targets' val accuracy: {values['lazy_target']}"
    return Reading(parts, head, f"{o1.k_of_n('pairs higher')}", _tasks(group), values)


CLAIM = Claim(
    "cure_decouple",
    "",
    "A cure from step 0 (ours, §4.2-4.3): lazy rows on the starved cells",
    "cure_decouple",
    "partly",
    "lazy rows raise the targets where draws are cut ({target_adam_r001_lazy_k}, {target_adam_m1_r1_lazy_k} "
    "seeds), not in every seed at matched draws ({target_adam_m1_matched_lazy_k}); common tokens and control "
    "unharmed",
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    figure="cure_decouple",
    ours=True,
    tables=("cures", "decoupling targets"),
    sweep_args=" --parents DECOUPLE_CAUSE_GROUP",
    read=cure_decouple,
    row=210,
)
