"""What a figure draws, read from run and group directories; matplotlib-free, so tests and the TUI can use it.

A run gives one curve per metric and its phase steps. A group gives, per arm × grid cell, the mean
over seeds at each evaluation with its spread by engine/records/stats.py's rule (the range below 8 seeds,
the 95% t-interval from 8): the same statistics `grok report` prints, taken at every step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.records.group import GroupRecord
from engine.records.group import cell_label as cell_label
from engine.records.group_dir import Member
from engine.records.run import read_run
from engine.rundir import clean_text, short_name

# Summary fields marked on a run's curves: memorization, circuit formation, cleanup (the
# progress measures' phases, when the run has them) and generalization.
PHASES = (("memorized_step", "M"), ("circuit_step", "C"), ("cleanup_step", "U"), ("generalized_step", "G"))


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
    rec.require([*metrics, x])
    curves = []
    for m in metrics:
        pts = [(r[x], r[m]) for r in rec.rows if math.isfinite(r[m]) and math.isfinite(r[x])]
        curves.append(Curve(m, [p[0] for p in pts], [p[1] for p in pts]))
    markers = []
    for key, mark in PHASES:
        v = getattr(rec.phases, key)
        if v is not None:
            markers.append((_to_x(rec.rows, float(v), x), mark))
    markers += [(_to_x(rec.rows, float(s), x), mark) for s, mark in rec.fork_marks]  # F, I (docs/FORK.md)
    return short_name(clean_text(path.name)), curves, markers


def member_dirs(group: GroupRecord) -> dict[str, Path]:
    """Member id -> run directory (`Group.member_dir`), for the members that have one yet."""
    dirs = {m.id: group.member_dir(m) for m in group.members}
    return {k: d for k, d in dirs.items() if d.is_dir()}


def group_curves(group: GroupRecord, metric: str, x: str = "step") -> list[Curve]:
    """Per arm × grid cell: `metric`'s mean over seeds and its spread (range or t-interval) at each evaluation,
    the engine's curves (engine/records/group.py, with its rule for members that stopped early). Cells with
    no member that logged `metric` are left out."""
    out = []
    for c in group.curves(metric, x):
        if c.n:
            member = c.members[0]
            out.append(
                Curve(c.label, c.x.tolist(), c.mean.tolist(), c.lo.tolist(), c.hi.tolist(), c.n, member, c.values)
            )
    return out


def fourier_spectrum(run_dir: Path) -> tuple[int, list[int], list[float]] | None:
    """The last logged spectrum of fourier.csv: (its step, frequencies k >= 1, each one's share of the energy)."""
    spectra = read_run(run_dir).fourier
    if not spectra:
        return None
    last = spectra[-1]
    pts = [(k, n) for k, n in enumerate(last.norms) if k >= 1]  # the DC term is the embedding's mean, not a frequency
    total = sum(n * n for _, n in pts)
    if not pts or total == 0:
        return None
    return last.step, [k for k, _ in pts], [n * n / total for _, n in pts]
