"""The run directory's writer: consumes a run's event stream and appends each event's rows to its log.

Every log's name and header come from engine/rundir/files.py's table; rows are flushed as they happen and
summary.json is replaced atomically (engine/rundir/summary.py), so a killed run leaves every row written so far.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from engine.config import RunConfig
from engine.events import CircuitLogged, EvalLogged, Event, FourierLogged, RunFinished, RunStarted, TokensLogged
from engine.rundir.atomic import write_csv_atomic, write_json_atomic
from engine.rundir.csvlog import cell, read_csv
from engine.rundir.files import CONFIG, ERROR, FOURIER, JOINS, KEYFREQ, METRICS, RING, SUMMARY, TOKENS, log
from engine.rundir.probe_logs import join_steps
from engine.rundir.summary import read_summary, write_summary
from engine.status import Status
from engine.summary import RunSummary

# The log each event writes: a failed write is reported as that file's.
EVENT_LOG: dict[type, str] = {EvalLogged: METRICS, TokensLogged: TOKENS, FourierLogged: FOURIER, CircuitLogged: RING}


class RunWriteError(Exception):
    """A write into the run directory failed (a full disk, a read-only file system): one line."""

    def __init__(self, path: Path, err: OSError) -> None:
        self.path, self.errno = path, err.errno
        if err.errno == errno.ENOSPC:
            msg = f"no space left on device writing {path}"
        else:
            msg = f"cannot write {path}: {err.strerror or err}"
        super().__init__(msg)


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("grok-tui", "torch", "numpy"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[pkg] = metadata.version(pkg)
    return out


def write_error(run_dir: Path, text: str) -> None:
    """error.txt: the traceback of the engine fault that ended a run (best effort: a full disk skips it)."""
    with contextlib.suppress(OSError):
        (run_dir / ERROR).write_text(text)


class RunLog:
    """Consumes the event stream and writes the run directory."""

    def __init__(self, run_dir: Path, cfg: RunConfig, resume: bool = False) -> None:
        self.dir = run_dir
        self.cfg = cfg
        self.resume = resume
        self._files: dict[str, tuple[Any, Any]] = {}  # log name -> (file, csv writer), opened on first use
        self._columns: tuple[str, ...] = ()
        self.summary: dict[str, Any] = {}

    def _open(self, name: str, header: list[str]) -> tuple[Any, Any]:
        path = self.dir / name
        fresh = not (self.resume and path.exists() and path.stat().st_size > 0)
        fh = open(path, "w" if fresh else "a", newline="")  # noqa: SIM115 - open for the run; close() closes it
        w = csv.writer(fh)
        if fresh:
            w.writerow(header)
            fh.flush()
        return fh, w

    def _writer(self, name: str) -> tuple[Any, Any]:
        """The open log `name` (engine/rundir/files.py), opened with its header (or appended to on resume)."""
        if name not in self._files:
            self._files[name] = self._open(name, list(log(name).header or self._columns))
        return self._files[name]

    def _rows(self, name: str, rows: list[list[Any]]) -> None:
        fh, w = self._writer(name)
        w.writerows(rows)
        fh.flush()

    def handle(self, ev: Event) -> None:
        """Write what `ev` adds to the run directory; a failed write raises RunWriteError naming the file."""
        try:
            self._handle(ev)
        except OSError as e:
            name = Path(str(e.filename)).name.removesuffix(".tmp") if e.filename else None
            raise RunWriteError(self.dir / (name or EVENT_LOG.get(type(ev), SUMMARY)), e) from None

    def _handle(self, ev: Event) -> None:
        if isinstance(ev, RunStarted):
            self._start(ev)
        elif isinstance(ev, EvalLogged):
            self._rows(METRICS, [[cell(ev.row.get(c, float("nan"))) for c in self._columns]])
            self.summary.update(steps=ev.step, wall_s=ev.row.get("wall_s"))
        elif isinstance(ev, TokensLogged):
            g, va = ev.grad_norm, ev.val_acc
            cells = [(cell(g[t]) if g is not None else "", cell(va[t]) if va else "") for t in range(len(ev.updates))]
            self._rows(TOKENS, [[ev.step, t, n, *cells[t]] for t, n in enumerate(ev.updates)])
        elif isinstance(ev, FourierLogged):
            self._rows(FOURIER, [[ev.step, k, cell(v)] for k, v in enumerate(ev.norms)])
        elif isinstance(ev, CircuitLogged):
            keys = set(ev.keys)
            self._rows(KEYFREQ, [[ev.step, k, cell(s), int(k in keys)] for k, s in enumerate(ev.shares, start=1)])
            per_token = (ev.x, ev.y, ev.distance, ev.membership)
            rare = [int(r) for r in ev.rare] if ev.rare else [""] * len(ev.tokens)
            self._rows(RING, [[ev.step, t, *(cell(v[i]) for v in per_token), rare[i]] for i, t in enumerate(ev.tokens)])
        elif isinstance(ev, RunFinished):
            if (self.dir / RING).exists():
                write_joins(self.dir)
            self.summary = ev.summary.doc()
            if ev.error:
                self.summary["error"] = ev.error
            self.write_summary()

    def _start(self, ev: RunStarted) -> None:
        meta = {
            "versions": versions(),
            "device": ev.device,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "argv": sys.argv,
            "n_train": ev.n_train,
            "n_test": ev.n_test,
            "token_freq": list(ev.token_freq),
        }
        if not self.resume:
            write_json_atomic(self.dir / CONFIG, {**self.cfg.to_dict(), "_meta": meta})
        self._columns = ev.columns
        self._writer(METRICS)
        self._writer(TOKENS)
        old = read_summary(self.dir).doc() if self.resume else {}
        self.summary = {
            **old,
            "status": Status.RUNNING,
            "steps": ev.step,
            "device": ev.device,
            "preset": self.cfg.preset,
            "seed": self.cfg.train.seed,
            **ev.tokens.fields(),  # a live run's readers see the token sets the evaluation uses (engine/records/run.py)
        }
        self.write_summary()

    def write_summary(self) -> None:
        """summary.json from `self.summary`, through RunSummary (engine/summary.py): the reader's checks."""
        try:
            write_summary(self.dir, RunSummary.written(self.summary))
        except OSError as e:
            raise RunWriteError(self.dir / SUMMARY, e) from None

    def close(self) -> None:
        """Close the CSV files. A file whose last write failed (a full disk) still holds that row in
        its buffer and fails again here; the row is lost either way and the fault already reported."""
        for fh, _ in self._files.values():
            with contextlib.suppress(OSError):
                fh.close()
        self._files = {}


def write_joins(run_dir: Path) -> None:
    """joins.csv from ring.csv: each token's join step (engine/rundir/probe_logs.py `join_steps`), rare or not."""
    rows = read_csv(Path(run_dir) / RING)
    joined = join_steps(rows)
    rare = {int(r["token"]): r.get("rare", "") for r in rows}
    out = [[tok, rare.get(tok, ""), "" if (step := joined[tok]) is None else step] for tok in sorted(joined)]
    write_csv_atomic(Path(run_dir) / JOINS, [log(JOINS).header, *out])
