"""The interventions' table: each fork arm of a sweep against the run it forks, paired by seed (docs/FORK.md).

For a fork member, *before* is its parent's evaluation at the fork step (summary.json fork_step; the last
the parent logged at or before it) and *after* is the fork's last logged value of the metric, so a fork
that trains one step (an intervention read with everything frozen) is read as sharply as one that trains
500. The change is after − before per seed, reported as the mean with its spread (the range below 8
seeds) and k of n seeds higher. Issue 33's row interventions (presets/decouple_paper.toml) are read here:
the target rows rescaled to the ring's radius, and the target rows trained alone on all or on their own
pairs, each against the starved run it forks at step 10,000.
"""

from __future__ import annotations

import math
from typing import Any

from engine.records.group_dir import Group, Member
from engine.records.stats import put_spread, seed_interval
from engine.rundir import read_metrics, read_summary

TARGET_METRICS = ("val_acc_target", "target_norm")  # a group with target tokens (the decoupling)
DEFAULT_METRICS = ("val_acc",)


def before_after(group: Group, fork: Member, metrics: list[str]) -> dict[str, tuple[float, float]]:
    """Per metric, (the parent's value at the fork step, the fork's last value); a metric either side lacks
    is left out. Each run's metrics.csv is read once."""
    parent = next((m for m in group.members if m.id == fork.fork_of), None)
    at = read_summary(group.member_dir(fork)).fork_step
    if parent is None or at is None:
        return {}
    before = [r for r in read_metrics(group.member_dir(parent)) if r["step"] <= at]
    after = [r for r in read_metrics(group.member_dir(fork)) if r["step"] > at]
    out = {}
    for k in metrics:
        b = before[-1].get(k, math.nan) if before else math.nan
        a = next((v for r in reversed(after) if math.isfinite(v := r.get(k, math.nan))), math.nan)
        if math.isfinite(a) and math.isfinite(b):
            out[k] = (b, a)
    return out


def intervention_rows(group: Group, metrics: list[str]) -> list[dict[str, Any]]:
    """One row per fork arm: its `from` arm, and per metric the mean before, after and change (each with its
    spread over seeds, as the report's interval columns) and k of n seeds higher. Empty for a group
    without forks."""
    res = group.results()
    out = []
    for arm, src, _ in group.spec.fork_arms():
        members = [m for m in group.members if m.arm == arm and m.id in res and res[m.id].ended]
        if not members:
            continue
        row: dict[str, Any] = {"arm": arm, "from": src or "every arm"}
        row["_members"] = [res[m.id] for m in members]  # their results rows, for the report's "stopped at"
        read = [before_after(group, m, metrics) for m in members]
        for k in metrics:
            pairs = [r[k] for r in read if k in r]
            for name, xs in (("before", [b for b, _ in pairs]), ("after", [a for _, a in pairs])):
                put_spread(row, f"{k} {name}", seed_interval(xs))
            put_spread(row, f"{k} change", seed_interval([a - b for b, a in pairs]))
            row[f"{k} higher"] = f"{sum(a > b for b, a in pairs)}/{len(pairs)}" if pairs else "-"
        out.append(row)
    return out
