"""A sweep group as the faces read it: its members' run records, grouped by arm × grid cell, and each
cell's curve of a metric over its seeds: the mean, its spread by `grok report`'s rule (the range below 8
members, the 95% t-interval of the mean from 8; engine/records/stats.py seed_interval_rows, the figures'
band) and the min–max band.

`grok plot`, the TUI's compare view and `grok figure` all draw these curves, so they show the same mean.

The rule for a member that stopped before the others: a member whose run *finished* (it ran its budget,
or train.patience stopped it once val_acc held the target) keeps its last logged value from its last step
to the end of the cell's axis. Its run is over by its own rule, so that value is its result, and leaving
it out would let the mean drift toward the slow seeds where the fast ones stop. Every other member (still
running, interrupted, failed, diverged, or dead with no writer) counts only at the steps it logged: no
value is assumed past where it got to.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import ConfigError, RunConfig
from engine.events import Status
from engine.records.frames import data_frame
from engine.records.group_dir import Group, Member, SweepSpec
from engine.records.paired import DEFAULT_TAIL, PairedFinal, member_finals, paired_finals
from engine.records.results import ResultsRow
from engine.records.run import RunRecord, read_run
from engine.records.stats import seed_interval_rows
from engine.rundir.csvlog import torn
from engine.rundir.files import GROUP_FILE, METRICS, RESULTS, SUMMARY, is_run_dir, mtime
from engine.rundir.safetext import clean_text
from engine.rundir.schema import ENDED
from engine.rundir.summary import read_summary

HELD = Status.FINISHED  # the one status whose last value a group curve holds to the end of the axis


@dataclass(frozen=True)
class CellCurve:
    """One arm × grid cell's curve of a metric over its seeds, at every step any member logged it."""

    label: str  # `adamlr op=mul`: the arm and the grid values that vary (`cell_label`)
    members: tuple[Member, ...]  # the cell's members, in group order
    n: int  # members that logged the metric at least once
    max_steps: int  # the cell's budget (the largest of its members')
    steps: np.ndarray
    x: np.ndarray  # the x axis at those steps: the steps, or (x="epoch") the epoch of the first row there
    mean: np.ndarray
    lo: np.ndarray  # the spread at each step: [min, max] below 8 members, the 95% t-interval from 8
    hi: np.ndarray
    min: np.ndarray  # the band: the lowest and the highest member
    max: np.ndarray

    @property
    def values(self) -> dict[str, Any]:
        """The cell's grid values."""
        return dict(self.members[0].values)


def cell_key(m: Member) -> tuple[Any, ...]:
    """Members with the same arm and grid values share a cell; only the seed differs."""
    return (m.arm, tuple((k, repr(v)) for k, v in m.values.items()))


def cell_label(group: Group | GroupRecord, m: Member, drop: tuple[str, ...] = ()) -> str:
    """`adamlr op=mul`: the arm and the grid values (those that vary), less the keys in `drop`."""
    varying = [k for k, v in group.spec.grid.items() if len(v) > 1 and k not in drop]
    parts = [m.arm] if m.arm and "arm" not in drop else []
    parts += [f"{k.split('.')[-1]}={m.values[k]}" for k in varying if k in m.values]
    return " ".join(parts) or group.preset or group.dir.name


@dataclass(frozen=True)
class GroupRecord:
    """A sweep group directory read back: its spec, its members' run records and its cells' curves."""

    path: Path
    group: Group

    # The group as written (engine/records/group_dir.py Group): what a face reads of it, through this record.
    @property
    def dir(self) -> Path:
        return self.group.dir

    @property
    def doc(self) -> dict[str, Any]:
        """group.json as read (checked by engine/rundir/schema.py)."""
        return self.group.doc

    @property
    def spec(self) -> SweepSpec:
        return self.group.spec

    @property
    def members(self) -> list[Member]:
        return self.group.members

    @property
    def base(self) -> RunConfig:
        return self.group.base

    @property
    def preset(self) -> str:
        return self.group.preset

    def config(self, m: Member) -> RunConfig:
        return self.group.config(m)

    def member_dir(self, m: Member) -> Path:
        return self.group.member_dir(m)

    def member(self, member_id: str) -> Member:
        return self.group.member(member_id)

    def pending(self) -> list[Member]:
        return self.group.pending()

    def with_seeds(self, seeds: set[int]) -> GroupRecord:
        """The record of the group on these seeds only (engine/records/group_dir.py `with_seeds`)."""
        return GroupRecord(self.path, self.group.with_seeds(seeds))

    @functools.cached_property
    def runs(self) -> dict[str, RunRecord]:
        """Member id -> its run record, for the members whose run directory exists yet."""
        out = {}
        for m in self.group.members:
            d = self.group.member_dir(m)
            if is_run_dir(d):  # a member not started yet has none, one starting has no config.json yet
                out[m.id] = read_run(d)
        return out

    @property
    def cells(self) -> list[list[Member]]:
        """The members by arm × grid cell, in member order."""
        by_cell: dict[tuple[Any, ...], list[Member]] = {}
        for m in self.group.members:
            by_cell.setdefault(cell_key(m), []).append(m)
        return list(by_cell.values())

    def results(self) -> dict[str, ResultsRow]:
        """results.csv: member id -> its typed row (engine/records/results.py ResultsRow: None for an empty cell)."""
        return self.group.results()

    def finals(self, metrics: list[str] | None = None, tail: int = DEFAULT_TAIL) -> dict[str, dict[str, float]]:
        """Member id -> {metric: its final value} for the members that ended, as `grok report` compares them:
        the mean of the member's last `tail` evaluations (engine/records/paired.py member_finals)."""
        return member_finals(self.group, metrics, tail)

    def compare(
        self, metric: str = "val_acc", arm: str | None = None, baseline: str | None = None, tail: int = DEFAULT_TAIL
    ) -> list[PairedFinal]:
        """`metric`'s final values of `arm` (a value of the paired dimension: an arm, or the swept grid value;
        None: each one) against `baseline` (None: the report's), paired by seed, one per cell: the facts of
        `grok report`'s paired lines (`.text()` is the line; engine/records/paired.py)."""
        rows = list(self.results().values())
        got = paired_finals(self.group, rows, self.finals([metric], tail), metric, baseline)
        return [c for c in got if arm is None or arm in (c.label, c.label.partition("=")[2])]

    def curves(self, metric: str = "val_acc", x: str = "step") -> list[CellCurve]:
        """Each cell's curve of `metric` (see the module's rule for members that stopped early)."""
        return [self._curve(members, metric, x) for members in self.cells]

    def _curve(self, members: list[Member], metric: str, x: str) -> CellCurve:
        series: list[tuple[dict[float, float], bool]] = []  # each member's {step: value}, held past its end
        xs_of: dict[float, float] = {}
        for m in members:
            rec = self.runs.get(m.id)
            if rec is None:
                continue
            c = {}
            for r in rec.rows:
                v = r.get(metric, math.nan)
                if math.isfinite(v):
                    c[r["step"]] = v
                    xs_of.setdefault(r["step"], r.get(x, math.nan))
            if c:
                series.append((c, rec.status == HELD))
        steps = sorted(xs_of)
        a = np.full((len(steps), len(series)), math.nan)  # (steps, members)
        for j, (c, held) in enumerate(series):
            end = max(c)
            for i, s in enumerate(steps):
                a[i, j] = c[s] if s in c else c[end] if held and s > end else math.nan
        mean, lo, hi = seed_interval_rows(a)
        ok = np.isfinite(a)
        low, high = (
            np.where(ok, a, np.inf).min(axis=1, initial=np.inf),
            np.where(ok, a, -np.inf).max(axis=1, initial=-np.inf),
        )
        low[~ok.any(axis=1)] = high[~ok.any(axis=1)] = math.nan
        budget = max([1, *(self.group.config(m).train.max_steps for m in members)])
        return CellCurve(
            cell_label(self.group, members[0]),
            tuple(members),
            len(series),
            budget,
            np.array(steps, dtype=float),
            np.array([xs_of[s] for s in steps], dtype=float),
            mean,
            lo,
            hi,
            low,
            high,
        )

    @functools.cached_property
    def metrics(self) -> dict[str, np.ndarray]:
        """Every member's metrics.csv rows in one long table, as columns: `member`, `arm`, `seed`, `status`
        (its run's), each swept key (the grid's and the arms'), then the metric columns (NaN where a member
        does not log a column)."""
        rows: list[dict[str, Any]] = []
        for m in self.group.members:
            rec = self.runs.get(m.id)
            head = {"member": m.id, "arm": m.arm, "seed": m.seed, "status": rec.status if rec else None}
            for r in rec.rows if rec is not None else []:
                rows.append({**head, **self.group.swept_values(m), **r})
        out: dict[str, np.ndarray] = {}
        for k in dict.fromkeys(k for r in rows for k in r):
            if k in ("member", "arm", "status", *self.group.spec.swept):  # names, and swept values as given
                out[k] = np.array([r.get(k) for r in rows], dtype=object)
            else:
                out[k] = np.array([r.get(k, math.nan) for r in rows], dtype=int if k == "seed" else float)
        return out

    def to_pandas(self) -> Any:
        """`metrics` as a pandas DataFrame, one row per member and evaluation, with its swept values and its
        run's status (pandas: the optional extra)."""
        return data_frame(self.metrics)


def check_results(group: Group) -> None:
    """ConfigError, one line naming results.csv, where it lies about the group: a row cut mid-line (the
    sweep replaces the file whole, engine/rundir/dirs.py write_results), or a member that ended (its
    summary says finished or diverged) without a row though results.csv was written after it ended."""
    path = group.dir / RESULTS
    if torn(path):
        raise ConfigError(f"{clean_text(path)}: the last row is cut mid-line (the sweep writes this file whole)")
    if not path.is_file():
        return
    written, rows = mtime(path), group.results()
    for m in group.members:
        d = group.member_dir(m)
        if m.id in rows or not is_run_dir(d) or mtime(d / SUMMARY) > written:
            continue
        status = read_summary(d).status
        if status in ENDED:
            raise ConfigError(f"{clean_text(path)}: member {clean_text(m.id)} ended ({status}) but has no row")


def read_group(path: str | Path) -> GroupRecord:
    """Read a sweep group directory without taking any lock; ConfigError naming the file for a bad one, or for
    a results.csv that lies about it (`check_results`)."""
    group = Group.open(path)
    check_results(group)
    return GroupRecord(Path(path), group)


def stamp(path: str | Path) -> tuple[float, ...]:
    """mtimes of group.json and of every member's metrics.csv: changes while the sweep runs."""
    p = Path(path)
    return tuple(mtime(f) for f in [p / GROUP_FILE, *sorted(p.glob(f"*/{METRICS}"))])
