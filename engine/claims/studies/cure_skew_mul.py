"""Study: Lazy rows on the token-starved split (ours, §4.1-4.3)."""

from __future__ import annotations

from engine.claims.cause_pairs import TOL, _costs_nothing, _tasks
from engine.claims.claim import Claim
from engine.claims.readings import Reading, direction, generalized, part, rows, spread
from engine.claims.verdicts import GUARD
from engine.records.group_dir import Group


def cure_skew_mul(group: Group) -> Reading:
    """§4.1-4.3 (ours, issue 43 item 5) on skew_fixes_mul's split: each cure against plain Adam (`compare`),
    paired by seed; the rare tokens' rows are the starved ones (no token is a target). The claim is lazy rows':
    they raise the rare tokens' accuracy and cost the common tokens nothing."""
    from engine.sweep.report.tables import member_finals

    finals = member_finals(group, ["val_acc_rare", "val_acc_common", "val_acc"], 5)
    arm_of: dict[str, dict[int, dict[str, float]]] = {}
    for m in group.members:
        if m.id in finals:
            arm_of.setdefault(m.arm, {})[m.seed] = finals[m.id]
    base = arm_of.get(group.spec.compare or "adam", {})

    def change(arm: str, k: str) -> list[float]:
        mine = arm_of.get(arm, {})
        return [mine[s][k] - base[s][k] for s in sorted(mine) if s in base and k in mine[s] and k in base[s]]

    rare, common = change("lazy", "val_acc_rare"), change("lazy", "val_acc_common")
    o1, o2 = direction(rare, True), _costs_nothing(common)
    parts = [
        part(
            "lazy rows raise the rare tokens' accuracy",
            o1,
            f"{o1.k_of_n('seeds higher')}; change: {spread(rare, sign=True)}",
        ),
        part(
            f"lazy rows cost the common tokens less than {TOL:g}",
            o2,
            f"{o2.k_of_n('seeds')}; change: {spread(common, sign=True)}",
            role=GUARD,
        ),
    ]
    values: dict[str, str] = {}
    for arm in arm_of:
        if arm == (group.spec.compare or "adam"):
            continue
        for k in ("val_acc_rare", "val_acc_common", "val_acc"):
            d = change(arm, k)
            values[f"{arm}_{k}"] = spread(d, sign=True)
            values[f"{arm}_{k}_k"] = f"{sum(x > 0 for x in d)} of {len(d)}"
    res = {r.member.id: r for r in rows(group)}
    for arm in arm_of:
        ms = [m for m in group.members if m.arm == arm and m.id in res]
        values[f"{arm}_reach"] = generalized([res[m.id] for m in ms])
    values["adam_rare"] = spread([v["val_acc_rare"] for v in base.values() if "val_acc_rare" in v])
    values["lazy_rare"] = spread([v["val_acc_rare"] for v in arm_of.get("lazy", {}).values() if "val_acc_rare" in v])
    head = f"rare tokens' val accuracy, lazy rows {values['lazy_rare']} against Adam {values['adam_rare']}"
    return Reading(parts, head, o1.k_of_n("seeds higher"), _tasks(group), values)


CLAIM = Claim(
    "cure_skew_mul",
    "",
    "Lazy rows on the token-starved split (ours, §4.1-4.3)",
    "cure_skew_mul",
    "not supported",
    "rare tokens' val accuracy {lazy_val_acc_rare} against Adam ({lazy_val_acc_rare_k} seeds higher); "
    "common tokens {lazy_val_acc_common} (a guard: no harm, not support)",
    tail=5,
    metrics="val_acc,val_acc_rare,val_acc_common",
    figure="cure_skew_mul",
    ours=True,
    read=cure_skew_mul,
    row=220,
)
