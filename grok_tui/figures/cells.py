"""A sweep's members' final values per grid cell, for the claims drawn against a swept value rather than a step.

Fig. 5 draws the final val accuracy and train loss against c; eqs. 8-9 and Figs. 12-13 draw the
time to generalize per grid cell. Both use `grok report`'s statistics (engine/records/stats.py): a
final value is the mean over the ended seeds with its spread (`seed_interval`: the range below 8 seeds,
the 95% t-interval from 8); the time to generalize is the median over the ended seeds with +inf for a
seed that never reached 95% (`summarize`), so a cell where most seeds failed reads `>N`, not the lucky
seeds' median.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import ConfigError
from engine.records.group import GroupRecord
from engine.records.group_dir import Member
from engine.records.results import ResultsRow, cell_number
from engine.records.run import read_run
from engine.records.stats import seed_interval, summarize
from grok_tui.figures.data import Curve, member_dirs


def ended_members(group: GroupRecord) -> list[tuple[Member, ResultsRow]]:
    """The members with a final status (finished, diverged), each with its results.csv row."""
    res = group.results()
    return [(m, r) for m in group.members if (r := res.get(m.id)) is not None and r.ended]


def _value(group: GroupRecord, m: Member, key: str) -> Any:
    row = group.results().get(m.id)
    return m.values.get(key, m.overrides.get(key, row.get(key) if row is not None else None))


def _number(v: Any) -> float | None:
    """A swept value as an x coordinate: a number as the sweep gave it or as results.csv holds it; None for text."""
    try:
        return cell_number(v)
    except (TypeError, ValueError):
        return None


def last_logged(run_dir: Path | None, metric: str) -> float | None:
    """The run's last finite value of `metric` in its metrics.csv (None when it never logged one)."""
    if run_dir is None:
        return None
    vals = read_run(run_dir).metrics.get(metric, np.zeros(0))
    vals = vals[np.isfinite(vals)]
    return float(vals[-1]) if len(vals) else None


def final_against(
    group: GroupRecord,
    metric: str,
    x_key: str,
    line_key: str | None = None,
    arm: str | None = None,
    categorical: bool = False,
) -> list[Curve]:
    """One line per value of `line_key`: the seeds' final `metric`, mean and spread, at each `x_key` value.

    `final_<metric>` of results.csv when it records one (final_val_acc, final_train_acc), else the
    last value in the member's metrics.csv (the final train loss). Only ended members count, of
    `arm` when given. `categorical`: x is the value's place in the grid (0, 1, ...), for values that
    are not a scale (m = -1 meaning "all pairs").
    """
    dirs = member_dirs(group)
    order = [repr(v) for v in group.spec.grid.get(x_key, [])]
    cells: dict[Any, dict[float, list[float]]] = {}
    for m, row in ended_members(group):
        if arm is not None and m.arm != arm:
            continue
        v = row.get(f"final_{metric}")
        if v is None:
            v = last_logged(dirs.get(m.id), metric)
        xv = _value(group, m, x_key)
        x = float(order.index(repr(xv))) if categorical and repr(xv) in order else None if categorical else _number(xv)
        if v is None or x is None:
            continue
        line = _value(group, m, line_key) if line_key else ""
        cells.setdefault(line, {}).setdefault(x, []).append(v)
    out = []
    for line, by_x in cells.items():
        xs = sorted(by_x)
        stats = [seed_interval(by_x[x]) for x in xs]
        label = str(line) if line_key else (group.preset or group.dir.name)
        n = min(len(by_x[x]) for x in xs)
        out.append(Curve(label, xs, [s.mean for s in stats], [s.lo for s in stats], [s.hi for s in stats], n))
    return out


@dataclass
class Heat:
    """Steps to generalize on a rows × cols grid: the median (inf: most seeds never generalized) and its text."""

    row_key: str
    col_key: str
    rows: list[Any]
    cols: list[Any]
    median: list[list[float]]  # [row][col]; nan for a cell with no ended seed
    generalized: list[list[int]]  # seeds that reached 95% val accuracy
    ended: list[list[int]]
    budget: float

    def text(self, i: int, j: int) -> str:
        """`1.2k` over `3/3`; `>3k` when the median is past the budget; `·` before a seed has ended."""
        from grok_tui.axis import tick_label as _tick

        if self.ended[i][j] == 0:
            return "·"
        v = self.median[i][j]
        head = f">{_tick(self.budget)}" if math.isinf(v) else _tick(v)
        return f"{head}\n{self.generalized[i][j]}/{self.ended[i][j]}"


def generalization_grid(group: GroupRecord, row_key: str, col_key: str) -> Heat:
    """`summarize` (what `grok report` prints) of each (row, col) cell: the median generalized_step."""
    missing = [k for k in (row_key, col_key) if k not in group.spec.grid]
    if missing:
        raise ConfigError(f"{group.dir}: the sweep's grid has no {' or '.join(missing)}")
    rows, cols = list(group.spec.grid[row_key]), list(group.spec.grid[col_key])
    res = group.results()
    cell_rows: dict[tuple[str, str], list[ResultsRow]] = {}
    for m in group.members:
        key = (repr(_value(group, m, row_key)), repr(_value(group, m, col_key)))
        if m.id in res:
            cell_rows.setdefault(key, []).append(res[m.id])
    shape = [[math.nan] * len(cols) for _ in rows]
    median, gen, ended = [r[:] for r in shape], [[0] * len(cols) for _ in rows], [[0] * len(cols) for _ in rows]
    budget = 0.0
    for i, rv in enumerate(rows):
        for j, cv in enumerate(cols):
            s = summarize(cell_rows.get((repr(rv), repr(cv)), []))
            budget = max(budget, float(s["budget"]))
            ended[i][j], gen[i][j] = s["ended"], s["generalized"]
            median[i][j] = s["gen_median"] if s["ended"] else math.nan
    return Heat(row_key, col_key, rows, cols, median, gen, ended, budget)


def token_points(group: GroupRecord) -> list[tuple[str, list[float], list[float], list[float], float]]:
    """Per arm × grid cell, over its ended seeds: each operand token's training pairs against its learned
    step (`grok tokens`, the per-token form of Fig. 4), the pairs of the tokens never learned, Spearman's
    rank correlation of the learned ones, pooled over seeds. (label, pairs, steps, never-learned pairs, rho)."""
    from engine.records.group import cell_label
    from grok_tui.token_facts import spearman, token_table

    dirs = member_dirs(group)
    cells: dict[str, tuple[list[float], list[float], list[float]]] = {}
    for m, _ in ended_members(group):
        d = dirs.get(m.id)
        if d is None:
            continue
        try:
            rows, _, _ = token_table(d)
        except ConfigError:  # no tokens.csv: a run from before per-token accuracy was logged
            continue
        xs, ys, never = cells.setdefault(cell_label(group, m), ([], [], []))
        for r in rows:
            if r["learned_step"] is None:
                never.append(float(r["train_pairs"]))
            else:
                xs.append(float(r["train_pairs"]))
                ys.append(float(r["learned_step"]))
    out = []
    for label, (xs, ys, never) in cells.items():
        rho = spearman(xs, ys)
        out.append((label, xs, ys, never, rho))
    return out
