"""A run's CSV logs read back: complete rows only, checked against their header and against the run's
summary; and cut back on resume.

Rows are appended and flushed as they happen (engine/rundir/writer.py), so a crash, a signal or a killed
process leaves every row written so far readable; a torn last line is never read. Once a run's summary
closes it (finished, interrupted, failed, diverged), its logs are whole: `log_fault` names a log cut
mid-line, one with a step past the summary's, or one that ends before a finished run's last step, so no
face prints numbers from a log that lies about its run.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.config import ConfigError
from engine.rundir import files as runfiles
from engine.rundir.atomic import write_csv_atomic
from engine.rundir.safetext import clean_text
from engine.status import Status


def cell(v: Any) -> Any:
    """A value as a CSV cell: a float by its repr (exact on read), NaN as empty."""
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return v


def number(v: str | None) -> float:
    """A CSV cell as a number; NaN for an empty one (a probe not due, a value not measured)."""
    return float(v) if v else math.nan


def csv_lines(path: Path) -> list[list[str]]:
    """The complete rows of a run-log CSV, header first; [] when the file is missing or empty.

    A row is complete when its line ends in a newline: a last line without one was torn by a kill
    or a full disk and is dropped, whatever its fields look like (a torn `5` of a `5000` row must
    not come back as step 5). A row whose field count differs from the header's is an error.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    data = data[: data.rfind(b"\n") + 1]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a grok-tui CSV file (not UTF-8 text)") from None
    if "\0" in text:
        raise ConfigError(f"{path}: not a grok-tui CSV file (binary data)")
    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    except csv.Error as e:
        raise ConfigError(f"{path}: malformed CSV ({e})") from None
    if rows:
        n = len(rows[0])
        for i, r in enumerate(rows[1:], start=2):
            if len(r) != n:
                raise ConfigError(f"{path}: row {i} has {len(r)} fields where the header has {n}")
    return rows


def csv_header(path: Path) -> list[str]:
    """The header of a run-log CSV, or [] when the file is missing or empty."""
    rows = csv_lines(path)
    return rows[0] if rows else []


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a run-log CSV as dicts; a torn last line (killed mid-write) is dropped."""
    rows = csv_lines(path)
    if not rows:
        return []
    header = rows[0]
    return [dict(zip(header, r, strict=True)) for r in rows[1:]]


def read_metrics(run_dir: Path) -> list[dict[str, float]]:
    """metrics.csv as numbers (an empty cell is NaN); ConfigError naming the file for anything else."""
    path = Path(run_dir) / runfiles.METRICS
    rows = read_csv(path)
    if rows and "step" not in rows[0]:
        raise ConfigError(f"{path}: no step column")
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            out.append({k: number(v) for k, v in r.items()})
        except ValueError:
            bad = next(k for k, v in r.items() if not _is_float(v))
            raise ConfigError(f"{path}: row {i}: {clean_text(bad)} is not a number") from None
        if not math.isfinite(out[-1]["step"]):
            raise ConfigError(f"{path}: row {i}: step is not a number")
    return out


def _is_float(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return v == ""
    return True


CLOSED = (
    Status.FINISHED,
    Status.INTERRUPTED,
    Status.FAILED,
    Status.DIVERGED,
)  # a summary that closed its run: its logs are whole


def torn(path: Path) -> bool:
    """The file's last line has no newline: a row cut mid-write (a kill, a full disk, a cut copy)."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            if fh.tell() == 0:
                return False
            fh.seek(-1, 2)
            return fh.read(1) != b"\n"
    except OSError:
        return False


def last_step(path: Path) -> int | None:
    """The largest step in a log's `step` column (None: no rows, or no step column); a cell that is not a
    number is the log's reader's to name (engine/rundir/probe_logs.py, `read_metrics`)."""
    rows = csv_lines(path)
    if len(rows) < 2 or "step" not in rows[0]:
        return None
    i = rows[0].index("step")
    steps = [float(r[i]) for r in rows[1:] if _is_float(r[i]) and r[i]]
    finite = [int(s) for s in steps if math.isfinite(s)]
    return max(finite) if finite else None


def log_fault(
    path: Path, status: str, steps: int | None, ends: bool = True, max_steps: int | None = None
) -> str | None:
    """What is wrong with a log of a run whose summary says `status` after `steps` steps, else None: the first
    guarantee of the run writer (docs/ENGINE.md, "What the run writer guarantees") the log breaks. `ends`: the
    log has one row at every evaluation (metrics.csv, tokens.csv), so a finished run's ends at its last step;
    `max_steps`: config.json's train.max_steps, which no step passes.

    Only a summary that closed its run (CLOSED) is held to it: a run still running, or one whose writer
    died (its summary still says running), may end in a half-written line and run ahead of its summary.
    """
    if status not in CLOSED or not path.is_file():
        return None
    name = clean_text(path)
    if torn(path):
        return f"{name}: the last line is cut mid-row (the run is {status}, its logs should be whole)"
    rows = csv_lines(path)
    fault = header_fault(name, rows[0]) if rows else None
    if fault is not None or len(rows) < 2 or "step" not in rows[0]:
        return fault
    once = path.name == runfiles.METRICS  # one row per evaluation; the other step logs, a row per token or frequency
    prev = -1.0
    for i, r in enumerate(rows[1:], start=2):
        v = float(r[0]) if _is_float(r[0]) and r[0] else math.nan
        if not (math.isfinite(v) and v.is_integer() and v >= 0):
            return f"{name}: row {i}: step {clean_text(r[0])!r} is not a whole number ≥ 0"
        if v < prev or (once and v == prev):
            return f"{name}: row {i}: step {int(v)} {'repeats' if v == prev else 'comes after step ' + str(int(prev))}"
        prev = v
    last = int(prev)
    if max_steps is not None and last > max_steps:
        return f"{name}: step {last} is past config.json's train.max_steps {max_steps}"
    if steps is None:
        return None
    if last > steps:
        return f"{name}: step {last} is past the summary's last step {steps}"
    if ends and status == Status.FINISHED and last < steps:
        return f"{name}: ends at step {last}, before the finished run's last step {steps}"
    return None


def header_fault(name: str, header: list[str]) -> str | None:
    """A step log's header starts with `step` (joins.csv, a table of tokens, has none) and names each column once."""
    twice = next((c for c in header if header.count(c) > 1), None)
    if twice is not None:
        return f"{name}: the header names column {clean_text(twice)} twice"
    if "step" in header and header[0] != "step":
        return f"{name}: the header's first column is {clean_text(header[0])}, not step"
    return None


def truncate_csv(path: Path, max_step: int, keep_last: Callable[[int], bool] | None = None) -> None:
    """Drop rows past a checkpoint's step and any torn last line, so a resumed run appends where
    the checkpoint stands. `keep_last(step)` decides on a row at exactly `max_step` (an off-cadence
    row written where a run stopped is not one an uninterrupted run has)."""
    rows = csv_lines(path)
    if not rows:
        return
    keep = [rows[0]]
    for i, r in enumerate(rows[1:], start=2):
        try:
            step = int(float(r[0]))
        except ValueError:
            raise ConfigError(f"{path}: row {i}: step {clean_text(r[0])!r} is not a number") from None
        if step < max_step or (step == max_step and (keep_last is None or keep_last(step))):
            keep.append(r)
    if len(keep) == len(rows) and path.read_bytes().endswith(b"\n"):
        return
    write_csv_atomic(path, keep)


def truncate_logs(run_dir: Path, max_step: int, keep_last: Callable[[int], bool] | None = None) -> None:
    """`truncate_csv` on every log the run-file table marks `resumed` (engine/rundir/files.py LOGS)."""
    for f in runfiles.LOGS:
        if f.resumed:
            truncate_csv(Path(run_dir) / f.name, max_step, keep_last)
