"""The files of a run directory, by name: each CSV log's header and whether a resume truncates it.

One table drives the writer (engine/rundir/writer.py opens a log with its header from here) and `grok run
--resume` (engine/rundir/csvlog.py `truncate_logs` cuts every log marked `resumed` back to the checkpoint's
step). A new row log added here alone is written with its header and truncated on resume, so a resumed
run stays bit-for-bit the run that was never interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CONFIG = "config.json"
SUMMARY = "summary.json"
CHECKPOINT = "checkpoint.pt"
ERROR = "error.txt"  # the traceback of a failed run
METRICS = "metrics.csv"
TOKENS = "tokens.csv"
FOURIER = "fourier.csv"
# The progress probe's files (engine/probes/progress.py): key-frequency shares over time, the ring's
# per-token rows over time, and each token's join step written when the run ends.
KEYFREQ, RING, JOINS = "keyfreq.csv", "ring.csv", "joins.csv"
GROUP_FILE = "group.json"  # a sweep group directory (engine/records/group_dir.py)
RESULTS = "results.csv"  # a sweep group's one row per member (engine/records/results.py)
PAPER_FILE = "paper.json"  # the record of `grok sweep --preset paper`: its sweeps, groups and segments
KEPT = "kept.json"  # a kept group's provenance (engine/rundir/keep.py)


@dataclass(frozen=True)
class RunFile:
    """A CSV log of a run: its name, its header (empty: the run's own columns) and whether a resume
    truncates it to the checkpoint's step (a log whose rows are steps)."""

    name: str
    header: tuple[str, ...] = ()
    resumed: bool = True


LOGS: tuple[RunFile, ...] = (
    RunFile(METRICS),  # the header is the run's columns (engine/rundir/columns.py and the probes')
    RunFile(TOKENS, ("step", "token", "updates", "grad_norm", "val_acc")),
    RunFile(FOURIER, ("step", "freq", "norm")),
    RunFile(KEYFREQ, ("step", "freq", "share", "key")),
    RunFile(RING, ("step", "token", "x", "y", "distance", "membership", "rare")),
    RunFile(JOINS, ("token", "rare", "join_step"), resumed=False),  # rewritten whole when the run ends
)


def log(name: str) -> RunFile:
    """The table's entry for `name`."""
    return next(f for f in LOGS if f.name == name)


def is_run_dir(path: str | Path) -> bool:
    """A run directory is one with a config.json."""
    return (Path(path) / CONFIG).is_file()


def is_group(path: str | Path) -> bool:
    """A sweep group directory is one with a group.json."""
    return (Path(path) / GROUP_FILE).is_file()


def is_paper_dir(path: str | Path) -> bool:
    """A paper directory is one with a paper.json."""
    return (Path(path) / PAPER_FILE).is_file()


def mtime(path: Path) -> float:
    """A file's modification time, 0 while it does not exist: what the faces poll to redraw a live run."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
