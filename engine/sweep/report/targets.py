"""The decoupling's table (issue 33): per cell, how often the target tokens' rows were updated and what the
targets learned. For a group whose members name data.starve_k targets (presets decouple, decouple_paper).

- batch share: the share of steps whose batch held a target (summary.json target_batch_share, eq. 4's p_i;
  the sparse regime is where it is small), and the draw ratio: a target's share of the sampler's draws
  over the median token's (target_draw_ratio);
- target norm: the targets' rows against the ring the other tokens form, 1 = its median radius (the
  targets probe, engine/probes/targets.py), the mean of the member's last `tail` measurements;
- learned step: per member, the median over its targets of the step from which each target's val_acc
  stays >= 0.9 (summary.json learned_step); a target never learned counts as not learned by the budget,
  so a member whose median target is unlearned is censored and the cell's value is a bound (≥).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from engine.events import Status
from engine.records.group_dir import Group
from engine.records.stats import RANGE, bracketed, cells, put_spread, seed_interval
from engine.rundir import LEARNED_ACC, read_summary
from engine.summary import RunSummary

INF = math.inf
LEARNED_COLUMN = f"learned step (val_acc_target ≥ {LEARNED_ACC:g})"


def has_targets(group: Group) -> bool:
    """Whether any member of the group names data.starve_k target tokens."""
    return bool(group.base.data.starve_k) or any(group.config(m).data.starve_k for m in group.members)


def member_target_learned(summary: RunSummary) -> tuple[float, int, int] | None:
    """(median learned step over the targets, inf if the median target is unlearned; targets learned; targets)."""
    targets = summary.target_tokens or []
    steps = summary.learned_step or []
    if not targets or not steps:
        return None
    per = [float(v) if t < len(steps) and (v := steps[t]) is not None else INF for t in targets]
    return float(statistics.median(per)), sum(s != INF for s in per), len(per)


def learned_cell(values: list[tuple[float, int, int]], budget: float) -> str:
    """A cell's learned step: mean over members (range, n), members counted at their budget where their
    median target was not learned (then "≥": a bound), and the targets learned of all."""
    if not values:
        return "-"
    censored = sum(v[0] == INF for v in values)
    xs = [budget if v[0] == INF else v[0] for v in values]
    sp = seed_interval(xs)
    learned, total = sum(v[1] for v in values), sum(v[2] for v in values)
    is_range = bool(censored) or sp.kind == RANGE
    lo, hi = (min(xs), max(xs)) if is_range else (sp.lo, sp.hi)
    bound = "≥" if censored else ""
    return f"{bound}{bracketed(sp.mean, lo, hi, len(xs), is_range, '.0f')}; {learned}/{total} targets learned"


def target_rows(group: Group, dims: list[str], finals: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """The rows of the decoupling table (a group `has_targets`), one per cell; `finals` holds each member's
    tail mean of target_norm (engine/sweep/report/tables.py member_finals)."""
    rows = [r for r in group.results().values() if r.get("status") == Status.FINISHED]
    out = []
    for key, rs in cells(rows, dims).items():
        row: dict[str, Any] = dict(zip(dims, key, strict=True))
        shares, ratios, norms, learned = [], [], [], []
        budget = 0.0
        for r in rs:
            s = read_summary(group.member_dir(group.member(r["member"])))
            budget = max(budget, float(r.get("max_steps") or 0))
            if s.target_batch_share is not None:
                shares.append(s.target_batch_share)
            if s.target_draw_ratio is not None and math.isfinite(s.target_draw_ratio):
                ratios.append(s.target_draw_ratio)
            if "target_norm" in finals.get(r["member"], {}):
                norms.append(finals[r["member"]]["target_norm"])
            if (v := member_target_learned(s)) is not None:
                learned.append(v)
        for name, xs in (("batch share", shares), ("draw ratio", ratios), ("target norm", norms)):
            put_spread(row, name, seed_interval(xs))
        row[LEARNED_COLUMN] = learned_cell(learned, budget)
        row["_members"] = rs  # the cell's results rows, for the report's "stopped at"
        out.append(row)
    return out
