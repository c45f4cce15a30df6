"""grok-tui's faces: the `grok` CLI and the Textual lab app; and, for notebooks, `open_run`, `open_group` and
`open_runs`.

    from grok_tui import open_group
    g = open_group("runs/20260101-120000-fig6_optimizers-sweep")
    g.curves("val_acc")  # per arm × grid cell: mean, its spread (range below 8 seeds), min–max band
    g.compare("val_acc", "adamlr")  # the paired differences `grok report` prints

They return the engine's read-only records (engine/records/run.py RunRecord, engine/records/group.py
GroupRecord, engine/records/runs.py RunTable), the same ones every face reads, and a directory they cannot
read raises `ConfigError` with one line; docs/API.md walks through a session. They are imported on first
use, so `grok` itself starts without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.config import ConfigError
    from engine.records.group import GroupRecord
    from engine.records.run import RunRecord
    from engine.records.runs import RunTable

__all__ = ["ConfigError", "GroupRecord", "RunRecord", "RunTable", "open_group", "open_run", "open_runs"]


def open_run(path: Any) -> RunRecord:
    """A run directory as a RunRecord: `.config`, `.summary`, `.phases`, `.metrics` (numpy columns),
    `.to_pandas()`; ConfigError naming the file for a directory that is not a readable run."""
    from engine.records.run import read_run

    return read_run(path)


def open_group(path: Any) -> GroupRecord:
    """A sweep group directory as a GroupRecord: `.runs`, `.curves(metric)`, `.results()`, `.metrics` (one
    long table), `.to_pandas()`; ConfigError naming the file for a directory that is not a readable group."""
    from engine.records.group import read_group

    return read_group(path)


def open_runs(root: Any) -> RunTable:
    """Every run under `root` (sweep members included), one row each as wandb's `api.runs` lists them: a list
    of RunRecords (`.config`, `.summary`), `.rows()` and `.to_pandas()` of their config keys and summary
    fields, and `.errors` for run directories that could not be read."""
    from engine.records.runs import read_runs

    return read_runs(root)


def __getattr__(name: str) -> Any:
    """`grok_tui.RunRecord`, `GroupRecord`, `RunTable` and `ConfigError`, imported on first use."""
    modules = {
        "RunRecord": "engine.records.run",
        "GroupRecord": "engine.records.group",
        "RunTable": "engine.records.runs",
        "ConfigError": "engine.config",
    }
    if name in modules:
        return getattr(importlib.import_module(modules[name]), name)
    raise AttributeError(f"module 'grok_tui' has no attribute {name!r}")
