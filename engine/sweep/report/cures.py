"""A cure study's table (presets/cure_decouple.toml; ours, issue 43 item 5): each cure against its own cell.

A group whose arms are named CELL and CELL_CURE (`adam_m1_r1` and `adam_m1_r1_lazy`) holds one untreated
arm per cell and the cures applied to it from step 0. Each cure arm is paired by seed with its cell's arm,
not with the group's first arm: a cure is read where it is applied. Per cure, the change of each outcome
(the mean of the last `tail` evaluations) with its mean (min–max) over seeds and k of n higher, and how many
seeds reach 95% val in each arm: a cure that lifts the targets (val_acc_target, the starved rows' accuracy,
§4.2) and costs the common tokens (val_acc_common) shows both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from engine.records.group_dir import Group
from engine.records.stats import put_spread, seed_interval

OUTCOMES = ("val_acc_target", "val_acc", "val_acc_common", "target_norm")
REACHED = "95% val, cell → cure"  # seeds whose val_acc reached 95% within the budget, in each arm


def cells(group: Group) -> list[tuple[str, str, str]]:
    """(cell arm, cure arm, cure name) for every arm named CELL_CURE where CELL is an arm of the group, in a
    group laid out as cells × cures (`cure_cells`)."""
    return cure_cells(list(group.spec.arms or {}))


def cure_cells(arms: list[str]) -> list[tuple[str, str, str]]:
    """(cell arm, cure arm, cure name) for every arm named CELL_CURE where CELL is one of `arms`, when the arms
    are laid out as cells × cures: every arm is a cell with a cure or a cure of a cell, in two cells or more
    (fig10_rank's `adam`, `adamlr` and `adam_wd5e-3` are not: adamlr is neither)."""
    out = []
    for cure in arms:
        base = max((a for a in arms if a != cure and cure.startswith(a + "_")), key=len, default=None)
        if base is not None:
            out.append((base, cure, cure.removeprefix(base + "_")))
    laid_out = {b for b, _, _ in out} | {c for _, c, _ in out} == set(arms)
    return out if laid_out and len({b for b, _, _ in out}) >= 2 else []


@dataclass(frozen=True)
class CurePairs:
    """One cure arm against its cell, paired by seed: each outcome's (cell, cure) final values, and whether
    each side reached 95% val."""

    cell: str
    arm: str
    cure: str
    values: dict[str, list[tuple[float, float]]]
    reached: list[tuple[bool, bool]]

    def changes(self, metric: str) -> list[float]:
        return [y - x for x, y in self.values.get(metric, [])]


def cure_metrics(group: Group) -> list[str]:
    """The OUTCOMES the group's members logged: what `cure_pairs` needs of `member_finals`."""
    logged = member_finals_keys(group)
    return [k for k in OUTCOMES if k in logged]


def cure_pairs(group: Group, finals: dict[str, dict[str, float]]) -> list[CurePairs]:
    """Every cure arm against its cell (`cells`), paired by seed over the members that ended; `finals`:
    member id -> each of `cure_metrics`' final value (engine/sweep/report/tables.py member_finals)."""
    pairs = cells(group)
    if not pairs:
        return []
    metrics = cure_metrics(group)
    res = group.results()
    by_arm: dict[str, dict[int, str]] = {}
    for m in group.members:
        if m.id in finals and m.id in res and res[m.id].ended:
            by_arm.setdefault(m.arm, {})[m.seed] = m.id
    out = []
    for base, cure, name in pairs:
        a, b = by_arm.get(base, {}), by_arm.get(cure, {})
        seeds = sorted(set(a) & set(b))
        if not seeds:
            continue
        values = {}
        for k in metrics:
            xy = [(finals[a[s]].get(k, math.nan), finals[b[s]].get(k, math.nan)) for s in seeds]
            values[k] = [(x, y) for x, y in xy if math.isfinite(x) and math.isfinite(y)]
        reached = [(res[a[s]].generalized_step is not None, res[b[s]].generalized_step is not None) for s in seeds]
        out.append(CurePairs(base, cure, name, values, reached))
    return out


def cure_rows(group: Group, finals: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """One row per cure arm: its cell, the paired change of each outcome, and seeds reaching 95% val."""
    out = []
    for c in cure_pairs(group, finals):
        row: dict[str, Any] = {"arm": c.arm, "cell": c.cell, "cure": c.cure}
        for k, xy in c.values.items():
            put_spread(row, f"{k} cell", seed_interval([x for x, _ in xy]))
            put_spread(row, f"{k} change", seed_interval([y - x for x, y in xy]))
            row[f"{k} higher"] = f"{sum(y > x for x, y in xy)}/{len(xy)}" if xy else "-"
        n = len(c.reached)
        row[REACHED] = f"{sum(x for x, _ in c.reached)}/{n} → {sum(y for _, y in c.reached)}/{n}"
        out.append(row)
    return out


def member_finals_keys(group: Group) -> set[str]:
    """The metrics columns any member logged (the header of its metrics.csv)."""
    from engine.rundir import METRICS, csv_lines

    keys: set[str] = set()
    for m in group.members:
        lines = csv_lines(group.member_dir(m) / METRICS)
        if lines:
            keys.update(lines[0])
            if keys.issuperset(OUTCOMES):
                break
    return keys
