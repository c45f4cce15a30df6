"""What a figure draws, read from run and group directories; matplotlib-free, so tests and the TUI can use it.

A run gives one curve per metric and its phase steps. A group gives, per arm × grid cell, the mean
over seeds at each evaluation with the 95% bootstrap interval of engine/sweep/stats.py: the same
statistics `grok report` prints, taken at every step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import ConfigError
from engine.run_record import read_run
from engine.rundir import clean_text, read_csv, read_metrics
from engine.sweep.spec import Group, Member
from engine.sweep.stats import mean_ci_rows

# Summary fields marked on a run's curves: memorization, circuit formation, cleanup (the
# progress measures' phases, when the run has them) and generalization.
PHASES = (("memorized_step", "M"), ("circuit_step", "C"), ("cleanup_step", "U"), ("generalized_step", "G"))
XS = ("step", "epoch")


@dataclass
class Curve:
    """One line: x values and y values; for a group cell, the band and the seed count too."""

    label: str
    x: list[float]
    y: list[float]
    lo: list[float] | None = None
    hi: list[float] | None = None
    n: int = 1
    member: Member | None = None  # the first member of a group cell (its arm and grid values)
    values: dict[str, Any] = field(default_factory=dict)  # the cell's grid values


def short_name(name: str) -> str:
    """A run directory's name without its `YYYYmmdd-HHMMSS-` prefix."""
    parts = name.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit() else name


def _to_x(rows: list[dict[str, float]], step: float, x: str) -> float:
    """A step on the `x` axis: the epoch of the closest logged row at or before it."""
    if x == "step":
        return step
    before = [r for r in rows if r["step"] <= step]
    r = before[-1] if before else rows[0]
    return r.get("epoch", math.nan)


def run_curves(path: Path, metrics: list[str], x: str = "step") -> tuple[str, list[Curve], list[tuple[float, str]]]:
    """A run's name, one curve per metric and its phase markers (from the summary, else from its rows)."""
    rec = read_run(path)
    if not rec.rows:
        raise ConfigError(f"{path}: no metrics rows yet")
    missing = [m for m in [*metrics, x] if m not in rec.rows[0]]
    if missing:
        have = ", ".join(k for k in rec.rows[0] if k not in XS)
        raise ConfigError(f"{path}: unknown metric(s) {', '.join(missing)}; have {have}")
    curves = []
    for m in metrics:
        pts = [(r[x], r[m]) for r in rec.rows if math.isfinite(r[m]) and math.isfinite(r[x])]
        curves.append(Curve(m, [p[0] for p in pts], [p[1] for p in pts]))
    markers = []
    for key, mark in PHASES:
        v = getattr(rec.phases, key)
        if v is not None:
            markers.append((_to_x(rec.rows, float(v), x), mark))
    from engine.lineage import fork_marks

    markers += [(_to_x(rec.rows, float(s), x), mark) for s, mark in fork_marks(path)]  # F, I (docs/FORK.md)
    return short_name(clean_text(path.name)), curves, markers


def member_dirs(group: Group) -> dict[str, Path]:
    from grok_tui.groupdata import member_dirs as dirs

    return dirs(group)


def cell_label(group: Group, m: Member, drop: tuple[str, ...] = ()) -> str:
    """`adamlr op=mul`: the arm and the grid values (those that vary), less the keys in `drop`."""
    varying = [k for k, v in group.spec.grid.items() if len(v) > 1 and k not in drop]
    parts = [m.arm] if m.arm and "arm" not in drop else []
    parts += [f"{k.split('.')[-1]}={m.values[k]}" for k in varying if k in m.values]
    return " ".join(parts) or group.preset or group.dir.name


def group_curves(group: Group, metric: str, x: str = "step") -> list[Curve]:
    """Per arm × grid cell: `metric`'s mean over seeds and its 95% bootstrap interval at each evaluation.

    Members that have not logged `metric` (or not yet run) are left out. A seed that ended early (it
    stopped on patience once it held the target) keeps its last value to the end of the axis, so the
    mean does not drop where the fast seeds stop and only the slow ones are left.
    """
    dirs = member_dirs(group)
    cells: dict[tuple, list[Member]] = {}
    for m in group.members:
        cells.setdefault((m.arm, tuple((k, repr(v)) for k, v in m.values.items())), []).append(m)
    out = []
    for members in cells.values():
        curves: list[dict[float, float]] = []
        xs_of: dict[float, float] = {}
        for m in members:
            d = dirs.get(m.id)
            if d is None or not (d / "metrics.csv").exists():
                continue
            c = {}
            for r in read_metrics(d):
                v = r.get(metric, math.nan)
                if math.isfinite(v):
                    c[r["step"]] = v
                    xs_of.setdefault(r["step"], r.get(x, math.nan))
            if c:
                curves.append(c)
        if not curves:
            continue
        steps = sorted(xs_of)
        ends = [max(c) for c in curves]
        a = np.array(
            [[c.get(s, c[e] if s > e else math.nan) for c, e in zip(curves, ends, strict=True)] for s in steps]
        )  # (steps, seeds), each seed's last value held past its end
        mean, lo, hi = mean_ci_rows(a)
        out.append(
            Curve(
                cell_label(group, members[0]),
                [xs_of[s] for s in steps],
                mean.tolist(),
                lo.tolist(),
                hi.tolist(),
                len(curves),
                members[0],
                dict(members[0].values),
            )
        )
    return out


def fourier_spectrum(run_dir: Path) -> tuple[int, list[int], list[float]] | None:
    """The last logged spectrum of fourier.csv: (its step, frequencies k >= 1, each one's share of the energy)."""
    rows = read_csv(Path(run_dir) / "fourier.csv")
    if not rows:
        return None
    try:
        last = max(float(r["step"]) for r in rows)
        pts = sorted((int(r["freq"]), float(r["norm"])) for r in rows if float(r["step"]) == last)
    except (KeyError, ValueError):
        raise ConfigError(f"{run_dir}/fourier.csv: not a grok-tui fourier.csv") from None
    pts = [(k, n) for k, n in pts if k >= 1]  # the DC term is the embedding's mean, not a frequency
    total = sum(n * n for _, n in pts)
    if not pts or total == 0:
        return None
    return int(last), [k for k, _ in pts], [n * n / total for _, n in pts]
