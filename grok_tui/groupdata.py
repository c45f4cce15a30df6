"""A sweep group directory read back for the compare view: mean val_acc per arm × grid cell, with its min–max band."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from engine.rundir import is_group, read_metrics
from engine.sweep.spec import GROUP_FILE, Group

__all__ = ["Cell", "GroupData", "is_group", "load_group", "stamp"]


@dataclass
class Cell:
    """One arm × grid point of a sweep, over its seeds: val_acc mean and min–max at each eval step."""

    label: str
    seeds: int = 0  # members with at least one evaluation
    max_steps: int = 1
    steps: list[int] = field(default_factory=list)
    mean: list[float] = field(default_factory=list)
    lo: list[float] = field(default_factory=list)
    hi: list[float] = field(default_factory=list)


@dataclass
class GroupData:
    """Cells of one group directory, in member order; `stamp` changes when any member's metrics change."""

    path: Path
    cells: list[Cell]
    stamp: tuple[float, ...] = ()


def member_dirs(group: Group) -> dict[str, Path]:
    """Member id -> run directory, the engine's `Group.member_dir`, for the members that have one yet."""
    dirs = {m.id: group.member_dir(m) for m in group.members}
    return {k: d for k, d in dirs.items() if d.is_dir()}


def stamp(path: str | Path) -> tuple[float, ...]:
    """mtimes of group.json and of every member's metrics.csv: changes while the sweep runs."""
    p = Path(path)
    out = []
    for f in [p / GROUP_FILE, *sorted(p.glob("*/metrics.csv"))]:
        try:
            out.append(f.stat().st_mtime)
        except OSError:
            out.append(0.0)
    return tuple(out)


def load_group(path: str | Path, metric: str = "val_acc") -> GroupData:
    """Group the members by arm and grid point, over `metric`; ConfigError for a bad group directory."""
    group = Group.open(path)
    multi_cell = len({(m.arm, tuple(m.values.items())) for m in group.members}) > 1
    dirs = member_dirs(group)
    by_cell: dict[tuple, list[dict[int, float]]] = {}
    labels: dict[tuple, str] = {}
    max_steps: dict[tuple, int] = {}
    for m in group.members:
        key = (m.arm, tuple((k, repr(v)) for k, v in m.values.items()))
        parts = [m.arm] if m.arm else []
        if multi_cell:
            parts += [f"{k.split('.')[-1]}={v}" for k, v in m.values.items()]
        labels[key] = " ".join(parts) or group.preset or group.dir.name
        max_steps[key] = max(max_steps.get(key, 1), group.config(m).train.max_steps)
        curve: dict[int, float] = {}
        d = dirs.get(m.id)
        if d is not None:
            for r in read_metrics(d):
                v = r.get(metric, math.nan)
                if math.isfinite(v):
                    curve[int(r["step"])] = v
        by_cell.setdefault(key, [])
        if curve:
            by_cell[key].append(curve)
    cells = [aggregate(labels[k], curves, max_steps[k]) for k, curves in by_cell.items()]
    return GroupData(Path(path), cells, stamp(path))


def aggregate(label: str, curves: list[dict[int, float]], max_steps: int) -> Cell:
    """Mean and min–max over the seeds that logged each step (a seed still running counts where it got to)."""
    cell = Cell(label, len(curves), max_steps)
    for step in sorted({s for c in curves for s in c}):
        vals = [c[step] for c in curves if step in c]
        cell.steps.append(step)
        cell.mean.append(sum(vals) / len(vals))
        cell.lo.append(min(vals))
        cell.hi.append(max(vals))
    return cell
