"""summary.json, written and read by this code: a run's RunSummary (engine/summary.py) as one JSON object.

`read_summary` gives an empty RunSummary for a run without the file, and `FILE: FIELD: ...` (a ConfigError) for
a field RunSummary refuses; `RESULTS_FIELDS` are the summary's fields a results.csv row carries.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from engine.config import ConfigError
from engine.rundir.atomic import json_object, write_json_atomic
from engine.rundir.files import SUMMARY
from engine.summary import RunSummary

RESULTS_FIELDS = tuple(f.name for f in dataclasses.fields(RunSummary) if f.metadata.get("results"))


def read_summary(run_dir: str | Path) -> RunSummary:
    """summary.json, or an empty RunSummary when it is missing; ConfigError `FILE: FIELD: ...` when it is
    not a JSON object or a field has the wrong type or range."""
    path = Path(run_dir) / SUMMARY
    try:
        doc = json_object(path)
    except FileNotFoundError:
        return RunSummary()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return RunSummary.of(doc)
    except ValueError as e:
        raise ConfigError(f"{path}: {e}") from None


def write_summary(run_dir: str | Path, summary: RunSummary) -> None:
    """Replace summary.json atomically and durably (engine/rundir/atomic.py); OSError passes to the writer."""
    write_json_atomic(Path(run_dir) / SUMMARY, summary.doc())
