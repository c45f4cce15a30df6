"""A sweep group for the compare view: the engine's cell curves (engine/records/group.py) of one column."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.records.group import CellCurve, read_group, stamp

__all__ = ["CellCurve", "GroupData", "load_group", "stamp"]


@dataclass(frozen=True)
class GroupData:
    """The cells of one group directory, in member order: mean, interval and min–max band per step."""

    path: Path
    cells: list[CellCurve]


def load_group(path: str | Path, metric: str = "val_acc") -> GroupData:
    """Each arm × grid cell's curve of `metric`; ConfigError for a bad group directory."""
    return GroupData(Path(path), read_group(path).curves(metric))
