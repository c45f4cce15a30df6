"""A fork's lineage and its interventions as summary.json and interventions.csv hold them (docs/FORK.md).

summary.json of a fork names its `parent` (the run directory it was forked from), its `fork_step`,
`ancestors` (every run above it, nearest first, each with the step it was forked at) and
`interventions` (each change made at a fork: {step, kind, target, detail}), inherited ones first.
interventions.csv holds the same events, one row each, for `grok export` and the charts' markers.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

LINEAGE_KEYS = ("parent", "fork_step", "ancestors", "interventions", "optimizer_state")
INTERVENTIONS = "interventions.csv"
INTERVENTION_HEADER = ["step", "kind", "target", "detail"]


def lineage(summary: dict[str, Any]) -> dict[str, Any]:
    """The lineage fields of a summary.json ({} for a run that is no fork)."""
    return {k: summary[k] for k in LINEAGE_KEYS if k in summary}


def write_interventions(run_dir: Path, events: list[dict[str, Any]]) -> None:
    """interventions.csv: one row per intervention (step, kind, target, detail), oldest first."""
    from engine.rundir import replace_atomic

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(INTERVENTION_HEADER)
            for e in events:
                w.writerow([int(e["step"]), e["kind"], e.get("target", ""), e.get("detail", "")])

    replace_atomic(Path(run_dir) / INTERVENTIONS, write)


def read_interventions(run_dir: str | Path) -> list[dict[str, Any]]:
    """interventions.csv's rows as {step, kind, target, detail} ([] for a run without one)."""
    from engine.rundir import read_csv

    out = []
    for r in read_csv(Path(run_dir) / INTERVENTIONS):
        try:
            out.append({"step": int(float(r["step"])), "kind": r["kind"], "target": r["target"], "detail": r["detail"]})
        except (KeyError, ValueError):
            continue
    return out


def fork_marks(run_dir: str | Path) -> tuple[tuple[int, str], ...]:
    """The charts' fork markers, by step: F where the run or one of its ancestors was forked, I where an
    intervention or a changed setting took effect at another step. A file that cannot be read gives
    none (a marker is not worth failing a chart for)."""
    from engine.config import ConfigError
    from engine.rundir import read_summary

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
