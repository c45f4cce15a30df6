"""A run directory as the faces read it: the parsed RunConfig, the status, the phases and the token sets,
as the engine computed them.

`grok show`, `ls`, `plot` and `tokens`, the figures and the TUI's --open and compare take these facts
from a `RunRecord` instead of reading config keys or recomputing them. Files are read through
engine.rundir, the run directory's package (a module per concept: dirs.py, summary.py, csvlog.py, ...).
For a live or killed run the summary lags its rows: the phases then come from the rows by the rules the
run applies live (engine/train/phases.py), and the token sets from the summary its start wrote, else from the split.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import ConfigError, RunConfig, from_dict
from engine.events import CircuitLogged, FourierLogged, Status, TokenSets, TokensLogged
from engine.records.frames import data_frame
from engine.rundir import (
    CLOSED,
    CONFIG,
    FOURIER,
    KEYFREQ,
    METRICS,
    RING,
    SUMMARY,
    TOKENS,
    Kept,
    clean_text,
    is_group,
    is_paper_dir,
    is_run_dir,
    list_kept,
    lock_holder,
    log_fault,
    mtime,
    read_circuit,
    read_config_doc,
    read_fourier,
    read_learned_steps,
    read_metrics,
    read_summary,
    read_tokens,
)
from engine.rundir import fork_marks as fork_marks  # a live run's markers, before it has a record
from engine.rundir.lineage import lineage, read_interventions
from engine.summary import RunSummary
from engine.train.phases import Phases, early_stop_note, phases_of_rows

PHASE_COLUMNS = {"step", "train_acc", "val_acc", "train_loss"}  # what phases_of_rows reads


@dataclass(frozen=True)
class RunRecord:
    """A run directory as read back: what show, ls, plot, tokens, the figures and the TUI's open and compare show."""

    path: Path
    config: RunConfig
    summary: RunSummary  # summary.json as written (engine/rundir/summary.py)
    rows: list[dict[str, float]]  # metrics.csv
    step: int  # progress: the summary's step count, or the last row's when the summary lags
    status: str  # a Status (engine/events.py): the summary's; RUNNING only while a process holds the lock, else DEAD
    pid: int | None  # the live writer, if any
    phases: Phases = Phases()
    meta: dict[str, Any] = field(default_factory=dict)  # config.json's `_meta`

    @property
    def preset(self) -> str:
        return clean_text(self.config.preset)

    @functools.cached_property
    def tokens(self) -> TokenSets:
        """The split's token sets: as the run logged them, else (a run from before they were logged) the
        split's, which its config fixes (engine/task/metrics.py split_tokens)."""
        from engine.task.metrics import split_tokens

        return TokenSets.from_fields(self.summary.doc()) or split_tokens(self.config)

    @functools.cached_property
    def metrics(self) -> dict[str, np.ndarray]:
        """metrics.csv as columns: each column's values over the logged evaluations, as a float array (NaN
        where a probe was not due)."""
        names = list(self.rows[0]) if self.rows else []
        return {k: np.array([r[k] for r in self.rows], dtype=float) for k in names}

    @property
    def fourier(self) -> list[FourierLogged]:
        """fourier.csv: the embedding's Fourier norms at each step they were measured (engine/rundir/probe_logs.py)."""
        return read_fourier(self.path)

    @property
    def tokens_logged(self) -> list[TokensLogged]:
        """tokens.csv: each evaluation's per-token updates, grad norms and val_acc (engine/rundir/probe_logs.py)."""
        return read_tokens(self.path)

    @property
    def learned_steps(self) -> tuple[list[int | None], float]:
        """Each operand token's learned step and the threshold (engine/rundir/probe_logs.py read_learned_steps)."""
        return read_learned_steps(self.path, self.config.data.p)

    @property
    def kept(self) -> list[Kept]:
        """The kept checkpoints, oldest first (engine/rundir/checkpoints.py, `grok fork`)."""
        return list_kept(self.path)

    @property
    def lineage(self) -> dict[str, Any]:
        """A fork's parent, fork_step, ancestors, interventions and optimizer_state ({} for no fork)."""
        return lineage(self.summary)

    @property
    def interventions(self) -> list[dict[str, Any]]:
        """A fork's changes, inherited ones first: {step, kind, target, detail} (engine/rundir/lineage.py)."""
        return read_interventions(self.path)

    @property
    def fork_marks(self) -> tuple[tuple[int, str], ...]:
        """The charts' F and I markers (engine/rundir/lineage.py `fork_marks`)."""
        return fork_marks(self.path)

    @property
    def circuit(self) -> list[CircuitLogged]:
        """keyfreq.csv and ring.csv: the progress probe's measurements (engine/rundir/probe_logs.py)."""
        return read_circuit(self.path)

    def require(self, columns: list[str]) -> None:
        """ConfigError `DIR: unknown metric(s) ...; have ...` unless every one of `columns` is logged (and a
        row is there to say so): what `grok plot` and `grok figure` say for a column the run does not log."""
        if not self.rows:
            raise ConfigError(f"{self.path}: no metrics rows yet")
        missing = [m for m in columns if m not in self.rows[0]]
        if missing:
            have = ", ".join(k for k in self.rows[0] if k not in ("step", "epoch"))
            raise ConfigError(f"{self.path}: unknown metric(s) {', '.join(missing)}; have {have}")

    def to_pandas(self) -> Any:
        """metrics.csv as a pandas DataFrame, one row per evaluation (pandas: the optional `pandas` extra)."""
        return data_frame(self.metrics)

    @property
    def wall_s(self) -> float | None:
        """Seconds the run has trained: the summary's, else the last row's (a live run's summary lags)."""
        last = self.rows[-1].get("wall_s", math.nan) if self.rows else math.nan
        return self.summary.wall_s if self.summary.wall_s is not None else last if math.isfinite(last) else None

    def stop_note(self) -> str | None:
        """The early-stop sentence of a finished run that train.patience ended before its budget."""
        if self.status != Status.FINISHED:
            return None
        return early_stop_note(self.phases.early_stop_step, self.config.train)


def run_stamp(path: str | Path) -> float:
    """The mtime of the run's metrics.csv (0 before it has one): changes with every logged evaluation."""
    return mtime(Path(path) / METRICS)


STEP_LOGS = (METRICS, TOKENS)  # a row at every evaluation: a finished run's end at its last step
PROBE_LOGS = (FOURIER, KEYFREQ, RING)  # rows when a probe is due: they may end before it


def check_logs(d: Path, status: str, steps: int | None, max_steps: int | None = None) -> None:
    """ConfigError, one line naming the file and the guarantee, for a closed run's log that breaks one of the run
    writer's guarantees (docs/ENGINE.md): cut, its header or steps out of order, past its summary or config.json,
    or (metrics.csv, tokens.csv) ending before a finished run's last step (engine/rundir/csvlog.py `log_fault`)."""
    if status in CLOSED and max_steps is not None and steps is not None and steps > max_steps:
        raise ConfigError(f"{d / SUMMARY}: steps {steps} is past config.json's train.max_steps {max_steps}")
    for name in (*STEP_LOGS, *PROBE_LOGS):
        fault = log_fault(d / name, status, steps, ends=name in STEP_LOGS, max_steps=max_steps)
        if fault is not None:
            raise ConfigError(fault)


def check_run(path: str | Path) -> None:
    """`check_logs` for a run directory read without its record (`grok export`): a live writer's logs pass."""
    d = Path(path)
    if lock_holder(d) is None:
        summary = read_summary(d)
        budget = (read_config_doc(d).get("train") or {}).get("max_steps")  # checked a whole number ≥ 1 on read
        check_logs(d, clean_text(summary.status or ""), summary.steps, budget)


def read_run(path: str | Path) -> RunRecord:
    """Read a run directory without taking its lock; ConfigError naming the file for a bad one."""
    d = Path(path)
    if not is_run_dir(d) and (is_group(d) or is_paper_dir(d)):  # what reads it, in Python and on the command line
        what = "a sweep group (open_group reads it in Python)" if is_group(d) else "a paper directory"
        raise ConfigError(f"{d}: {what}, not a run directory: `grok report {d}` reports it")
    if not is_run_dir(d):
        raise ConfigError(f"{d}: not a run directory (no {CONFIG})")
    doc = read_config_doc(d)
    config = from_dict(doc, str(d / CONFIG))
    summary = read_summary(d)
    rows = read_metrics(d)
    pid = lock_holder(d)
    step = summary.steps or 0
    if rows:
        step = max(step, int(rows[-1]["step"]))
    status: str = Status(summary.status) if summary.status else ""  # RunSummary checked it is one
    if pid is not None:
        status = Status.RUNNING  # a paused run's summary says running too: pausing is not written down
    elif status in ("", Status.RUNNING):
        status = Status.DEAD  # its writer died without closing the run (SIGKILL, power loss)
    check_logs(d, status, summary.steps, config.train.max_steps)
    phases = Phases.of(summary.doc())
    if status in (Status.RUNNING, Status.DEAD, Status.PREPARED) and rows and rows[0].keys() >= PHASE_COLUMNS:
        phases = phases_of_rows(config.train, rows, config.data.p if config.probe.progress_every else 0)
    if rows:  # a summary without the final val_acc (an old or a crafted one): the last row's
        phases = Phases(final_val_acc=rows[-1].get("val_acc", math.nan)).merged(phases)
    meta = doc.get("_meta")
    return RunRecord(d, config, summary, rows, step, status, pid, phases, meta if isinstance(meta, dict) else {})


def fork_changes(run_dir: str | Path) -> int:
    """How many interventions and changed settings a run carries from its forks (its ancestors' too): 0 for a
    run trained as its preset says. A file that cannot be read counts as none, as for `fork_marks`."""
    try:
        return len(read_interventions(run_dir))
    except (ConfigError, OSError):
        return 0
