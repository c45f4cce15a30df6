"""A fork's files: its lineage, its parent's logs up to the fork, and interventions.csv (docs/FORK.md).

summary.json of a fork names its `parent` (the run directory it was forked from), its `fork_step`,
`ancestors` (every run above it, nearest first, each with the step it was forked at) and
`interventions` (each change made at a fork: {step, kind, target, detail}), inherited ones first
(engine/summary.py RunSummary). interventions.csv holds the same events, one row each, for `grok export`
and the charts' markers. A run-directory module: the rest of the lab reads these through it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from engine.config import ConfigError
from engine.rundir.atomic import write_csv_atomic
from engine.rundir.csvlog import read_csv, truncate_logs
from engine.rundir.files import LOGS
from engine.rundir.summary import read_summary
from engine.summary import RunSummary

LINEAGE_KEYS = ("parent", "fork_step", "ancestors", "interventions", "optimizer_state")
INTERVENTIONS = "interventions.csv"
INTERVENTION_HEADER = ["step", "kind", "target", "detail"]


def lineage(summary: RunSummary | Mapping[str, Any]) -> dict[str, Any]:
    """The lineage fields of a summary ({} for a run that is no fork)."""
    doc = summary.doc() if isinstance(summary, RunSummary) else summary
    return {k: doc[k] for k in LINEAGE_KEYS if doc.get(k) is not None}


def write_interventions(run_dir: Path, events: list[dict[str, Any]]) -> None:
    """interventions.csv: one row per intervention (step, kind, target, detail), oldest first."""
    rows = [[int(e["step"]), e["kind"], e.get("target", ""), e.get("detail", "")] for e in events]
    write_csv_atomic(Path(run_dir) / INTERVENTIONS, [INTERVENTION_HEADER, *rows])


def read_interventions(run_dir: str | Path) -> list[dict[str, Any]]:
    """interventions.csv's rows as {step, kind, target, detail} ([] for a run without one)."""
    out = []
    for r in read_csv(Path(run_dir) / INTERVENTIONS):
        try:
            out.append({"step": int(float(r["step"])), "kind": r["kind"], "target": r["target"], "detail": r["detail"]})
        except (KeyError, ValueError):
            continue
    return out


def copy_logs(src: Path, dst: Path, step: int, keep_last: Callable[[int], bool]) -> None:
    """The parent's CSV logs into the fork's directory, cut back to the fork step as a resume cuts them
    (engine/rundir/csvlog.py truncate_logs): the fork's log starts with its parent's rows."""
    for f in LOGS:
        if f.resumed and (src / f.name).is_file():
            shutil.copyfile(src / f.name, dst / f.name)
    truncate_logs(dst, step, keep_last)


def recolumn(path: Path, columns: list[str]) -> None:
    """A CSV log rewritten under new columns (a fork turned a probe on): cells it has no value for stay empty."""
    write_csv_atomic(path, [columns, *([r.get(c, "") for c in columns] for r in read_csv(path))])


def fork_marks(run_dir: str | Path) -> tuple[tuple[int, str], ...]:
    """The charts' fork markers, by step: F where the run or one of its ancestors was forked, I where an
    intervention or a changed setting took effect at another step. A file that cannot be read gives
    none (a marker is not worth failing a chart for)."""
    try:
        lin = lineage(read_summary(Path(run_dir)))
        events = read_interventions(run_dir)
    except (ConfigError, OSError):
        return ()
    forks = {int(a["fork_step"]) for a in lin.get("ancestors", []) if isinstance(a, dict) and "fork_step" in a}
    if isinstance(lin.get("fork_step"), int):
        forks.add(lin["fork_step"])
    marks = {s: "F" for s in forks} | {e["step"]: "I" for e in events if e["step"] not in forks}
    return tuple(sorted(marks.items()))
