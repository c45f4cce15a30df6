"""A member's results.csv row: its run summary, its budget, and the first and last value of each probe column;
written by `results_row` and read back as a `ResultsRow`.

Written once here and used by every backend (the process pool, Ray, the batched trainer) and by
`--resume` when it adopts a member that ended after the sweep process died. Torch-free.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.config import ConfigError
from engine.events import Status
from engine.rundir import BASE_COLUMNS, number
from engine.rundir import ENDED as ENDED
from engine.rundir import RESULTS_FIELDS as RESULTS_FIELDS  # the summary's fields a results row carries, in order
from engine.summary import RunSummary


class ProbeTally:
    """First and last finite value of each probe column over a member's evaluations.

    Probe columns (Hessian λmax, ranks, Fourier share, ...) are every column but the ones every run
    has (`BASE_COLUMNS`). They are NaN at evaluations where the probe is not due, so the first and
    last *measured* values are what a report compares.
    """

    def __init__(self, base: Iterable[str] = BASE_COLUMNS) -> None:
        self.base = frozenset(base)
        self.first: dict[str, float] = {}
        self.last: dict[str, float] = {}

    def add(self, row: Mapping[str, Any]) -> None:
        """Take one evaluation's metrics row."""
        for k, v in row.items():
            if k not in self.base and isinstance(v, int | float) and math.isfinite(v):
                self.first.setdefault(k, float(v))
                self.last[k] = float(v)

    def columns(self) -> dict[str, float]:
        """`first_<col>` and `final_<col>` for every probe column measured at least once."""
        out = {f"first_{k}": v for k, v in self.first.items()}
        out.update({f"final_{k}": v for k, v in self.last.items()})
        return out


def results_row(
    member: str,
    summary: RunSummary | Mapping[str, Any],
    *,
    max_steps: int,
    run_dir: str,
    tally: ProbeTally | None = None,
) -> dict[str, Any]:
    """One member's row, as Group.record writes it; `run_dir` is the directory's name in the group. The
    summary goes through RunSummary whether it comes from a worker or from summary.json, so both rows agree."""
    s = summary if isinstance(summary, RunSummary) else RunSummary.written(summary)
    row: dict[str, Any] = {"member": member}
    row.update({k: getattr(s, k) for k in RESULTS_FIELDS})
    row["max_steps"] = max_steps
    if s.error:
        row["error"] = s.error
    row["run_dir"] = run_dir
    if tally is not None:
        row.update(tally.columns())
    return row


def failed_row(member: str, error: str, run_dir: str = "") -> dict[str, Any]:
    """The row of a member that could not start or whose worker died."""
    return {"member": member, "status": Status.FAILED, "error": error, "wall_s": 0.0, "run_dir": run_dir}


def cell_number(v: Any) -> float | None:
    """A numeric cell: None for an empty one or NaN; a number as written (csvlog.number parses the text);
    ValueError or TypeError for anything else."""
    x = (
        float(v)
        if isinstance(v, int | float) and not isinstance(v, bool)
        else number(v)
        if isinstance(v, str)
        else None
    )
    if x is None and v not in (None, ""):
        raise TypeError(v)
    return None if x is None or math.isnan(x) else x


_INTS = frozenset({"seed", "steps", "max_steps", "memorized_step", "generalized_step", "grokking_delay"})
_TEXT = frozenset({"member", "arm", "status", "error", "run_dir"})


@dataclass(frozen=True)
class ResultsRow(Mapping[str, Any]):
    """One results.csv row read back: typed fields, None for an empty cell.

    The fixed columns are fields; the swept keys keep the text the sweep wrote (`swept`), the probe columns
    (`first_<col>`, `final_<col>`) are numbers (`probes`). As a Mapping it is every column by name, typed
    the same way, so a report can read `row.get("final_val_acc")` or a swept key alike. A cell is parsed
    by engine/rundir/csvlog.py `number`, the one parser of a CSV cell.
    """

    member: str = ""
    arm: str = ""
    seed: int | None = None
    status: Status | None = None
    steps: int | None = None
    max_steps: int | None = None
    memorized_step: int | None = None
    generalized_step: int | None = None
    grokking_delay: int | None = None
    final_train_acc: float | None = None
    final_val_acc: float | None = None
    best_val_acc: float | None = None
    wall_s: float | None = None
    error: str = ""
    run_dir: str = ""
    swept: Mapping[str, str] = field(default_factory=dict)
    probes: Mapping[str, float | None] = field(default_factory=dict)
    extra: Mapping[str, str] = field(default_factory=dict)  # any other column, as its text

    @classmethod
    def of(cls, cells: Mapping[str, Any], swept: Iterable[str], where: str = "results.csv") -> ResultsRow:
        """A row as results.csv holds it (text; or the values `Group.record` was given); ConfigError
        `WHERE: member M: COLUMN: ...` for a fixed column's cell that is not what the sweep writes."""
        keys = set(swept)
        kw: dict[str, Any] = {}
        sw: dict[str, str] = {}
        probes: dict[str, float | None] = {}
        extra: dict[str, str] = {}
        for k, v in cells.items():
            try:
                if k in keys:
                    sw[k] = str(v)
                elif k == "status":
                    kw[k] = Status(v) if v else None
                elif k in _TEXT:
                    kw[k] = str(v)
                elif k in _INTS or k in RESULTS_FIELDS:
                    x = cell_number(v)
                    kw[k] = int(x) if x is not None and k in _INTS else x
                else:
                    try:
                        probes[k] = cell_number(v)
                    except (TypeError, ValueError):  # a column no sweep writes, kept as its text
                        extra[k] = str(v)
            except (TypeError, ValueError):
                who = cells.get("member", "?")
                raise ConfigError(f"{where}: member {who}: {k}: not a value the sweep writes ({v!r})") from None
        return cls(**kw, swept=sw, probes=probes, extra=extra)

    def _columns(self) -> dict[str, Any]:
        maps = ("swept", "probes", "extra")
        fixed = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in maps}
        return {**fixed, **self.swept, **self.probes, **self.extra}

    def __getitem__(self, key: str) -> Any:
        return self._columns()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns())

    def __len__(self) -> int:
        return len(self._columns())

    @property
    def ended(self) -> bool:
        """Whether the member ended by its own rule (Status.ended)."""
        return self.status is not None and self.status.ended
