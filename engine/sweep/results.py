"""A member's results.csv row: its run summary, its budget, and the first and last value of each probe column.

Written once here and used by every backend (the process pool, Ray, the batched trainer) and by
`--resume` when it adopts a member that ended after the sweep process died. Torch-free.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from engine.rundir.columns import BASE_COLUMNS
from engine.rundir.schema import ENDED as ENDED
from engine.rundir.summary import RESULTS_FIELDS, RunSummary

SUMMARY_FIELDS = RESULTS_FIELDS  # the run summary's fields a results row carries (engine/rundir/summary.py), in order


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
    row.update({k: getattr(s, k) for k in SUMMARY_FIELDS})
    row["max_steps"] = max_steps
    if s.error:
        row["error"] = s.error
    row["run_dir"] = run_dir
    if tally is not None:
        row.update(tally.columns())
    return row


def failed_row(member: str, error: str, run_dir: str = "") -> dict[str, Any]:
    """The row of a member that could not start or whose worker died."""
    return {"member": member, "status": "failed", "error": error, "wall_s": 0.0, "run_dir": run_dir}
