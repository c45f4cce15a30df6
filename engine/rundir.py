"""The run directory: config.json, metrics.csv, tokens.csv, fourier.csv, keyfreq.csv, ring.csv, joins.csv,
summary.json, checkpoint.pt.

The one module that reads and writes run directories. Rows are appended and flushed as they happen,
so a crash, a signal or a killed process leaves every row written so far readable; summary.json is
replaced atomically. A writer (`grok run`, `grok-tui`, a sweep member) holds `RunLock`, an `flock`
on a file inside the directory that the kernel releases when the process dies; readers never take it.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import platform
import re
import sys
import time
import unicodedata
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from engine.config import ConfigError, RunConfig
from engine.events import CircuitLogged, EvalLogged, Event, FourierLogged, RunFinished, RunStarted, TokensLogged

# The lock lives in engine/runlock.py; its names are part of this module's API too.
from engine.runlock import LOCK_FILE as LOCK_FILE
from engine.runlock import RunInUse as RunInUse
from engine.runlock import RunLock as RunLock
from engine.runlock import lock_holder
from engine.schema import check_config, check_group, check_summary

T = TypeVar("T")

CHECKPOINT = "checkpoint.pt"
CONFIG = "config.json"
SUMMARY = "summary.json"
METRICS = "metrics.csv"
ERROR = "error.txt"  # the traceback of a failed run
GROUP_FILE = "group.json"  # a sweep group directory (engine/sweep/spec.py)
# The progress probe's files (engine/probes/progress.py): key-frequency shares over time, the ring's
# per-token rows over time, and each token's join step written when the run ends.
KEYFREQ, RING, JOINS = "keyfreq.csv", "ring.csv", "joins.csv"
KEYFREQ_HEADER = ["step", "freq", "share", "key"]
RING_HEADER = ["step", "token", "x", "y", "distance", "membership", "rare"]


class RunDirError(ConfigError):
    """The output directory cannot be created or written."""


class RunWriteError(Exception):
    """A write into the run directory failed (a full disk, a read-only file system): one line."""

    def __init__(self, path: Path, err: OSError) -> None:
        self.path, self.errno = path, err.errno
        if err.errno == errno.ENOSPC:
            msg = f"no space left on device writing {path}"
        else:
            msg = f"cannot write {path}: {err.strerror or err}"
        super().__init__(msg)


def is_run_dir(path: str | Path) -> bool:
    """A run directory is one with a config.json."""
    return (Path(path) / CONFIG).is_file()


def is_group(path: str | Path) -> bool:
    """A sweep group directory is one with a group.json."""
    return (Path(path) / GROUP_FILE).is_file()


def clean_text(s: object) -> str:
    """`s` as text without control or format characters (terminal escapes, bidi overrides).

    Every string read from a run directory passes through here before a face prints it: a preset
    name in a shared config.json must not be able to retitle or repaint the user's terminal.
    """
    return "".join(ch for ch in str(s) if unicodedata.category(ch) not in ("Cc", "Cf", "Cs"))


def clean_block(s: object) -> str:
    """`clean_text` for multi-line text (a report, a table): each line cleaned, the newlines kept."""
    return "\n".join(clean_text(line) for line in str(s).split("\n"))


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("grok-tui", "torch", "numpy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def unique_dir(root: Path, base: str) -> Path:
    """Create root/base, or root/base-2, -3, ... if taken; OSError if none can be made."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(1, 1000):
        path = root / (base if i == 1 else f"{base}-{i}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise OSError(f"too many directories named {base}")


def new_run_dir(root: Path, preset: str, seed: int) -> Path:
    """runs/<YYYYmmdd-HHMMSS>-<preset>-s<seed>/, with a -N suffix if that name is taken."""
    try:
        name = re.sub(r"[^A-Za-z0-9_.+=-]", "_", preset)[:64].lstrip(".") or "custom"  # never a path
        path = unique_dir(root, f"{time.strftime('%Y%m%d-%H%M%S')}-{name}-s{seed}")
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise RunDirError(f"cannot write run directory under {root}: {e.strerror or e}") from None
    return path


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return repr(v)
    return v


def fsync_dir(path: Path) -> None:
    """Make a rename inside `path` durable (POSIX: the directory entry lives in the directory)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_atomic(path: Path, write: Any) -> None:
    """Write `path` through `write(tmp_path)`, fsync it, rename it over `path`, fsync the directory.

    A reader sees the old file or the new one, never a part; a crash leaves at most a `.tmp` file,
    and a failure (a full disk) removes it before the error goes on.
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_json_atomic(path: Path, obj: Any) -> None:
    text = json.dumps(obj, indent=2, default=str) + "\n"
    replace_atomic(path, lambda tmp: tmp.write_text(text))


def truncate_csv(path: Path, max_step: int, keep_last: Any = None) -> None:
    """Drop rows past a checkpoint's step and any torn last line, so a resumed run appends where
    the checkpoint stands. `keep_last(step)` decides on a row at exactly `max_step` (an off-cadence
    row written where a run stopped is not one an uninterrupted run has)."""
    rows = _csv_lines(path)
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

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as fh:
            csv.writer(fh).writerows(keep)

    replace_atomic(path, write)


def load_checkpoint(run_dir: Path) -> dict[str, Any]:
    """The checkpoint's state, loaded without running any code from the file (weights_only).

    A checkpoint holds only dicts, lists, tensors, strings and numbers; anything else (a pickle that
    calls a function, a truncated or foreign file) is refused with a one-line ConfigError.
    """
    import torch

    path = run_dir / CHECKPOINT
    if not path.exists():
        raise ConfigError(f"{run_dir}: no {CHECKPOINT} to resume from")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (PermissionError, IsADirectoryError) as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 - unpickling refused, a bad zip, a truncated file (EINVAL), ...
        reason = clean_text(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
        raise ConfigError(f"{path}: not a grok-tui checkpoint ({reason[:200]})") from None
    if not isinstance(state, dict) or not {"step", "model", "opt", "rng"} <= state.keys():
        raise ConfigError(f"{path}: not a grok-tui checkpoint (missing its step, model, optimizer or RNG state)")
    return state


def save_checkpoint(run_dir: Path, state: dict[str, Any], cfg: RunConfig) -> None:
    """Write a Trainer state as run_dir/checkpoint.pt atomically and durably: temp file, fsync, rename,
    fsync the directory. A batched sweep writes its members' checkpoints with it too."""
    import torch

    full = {**state, "config": cfg.to_dict()}

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            torch.save(full, fh)

    try:
        replace_atomic(run_dir / CHECKPOINT, write)
    except OSError as e:
        raise RunWriteError(run_dir / CHECKPOINT, e) from None
    except RuntimeError as e:  # torch's zip writer reports a failed write as RuntimeError
        cause = e.__cause__ or e.__context__
        if isinstance(cause, OSError):
            raise RunWriteError(run_dir / CHECKPOINT, cause) from None
        raise


def write_error(run_dir: Path, text: str) -> None:
    """error.txt: the traceback of the engine fault that ended a run (best effort: a full disk skips it)."""
    try:
        (run_dir / ERROR).write_text(text)
    except OSError:
        pass


class RunLog:
    """Consumes the event stream and writes the run directory."""

    def __init__(self, run_dir: Path, cfg: RunConfig, resume: bool = False) -> None:
        self.dir = run_dir
        self.cfg = cfg
        self.resume = resume
        self._metrics: Any = None
        self._tokens: Any = None
        self._fourier: Any = None
        self._circuit: dict[str, Any] = {}
        self._columns: tuple[str, ...] = ()
        self.summary: dict[str, Any] = {}

    def _open(self, name: str, header: list[str]) -> tuple[Any, Any]:
        path = self.dir / name
        fresh = not (self.resume and path.exists() and path.stat().st_size > 0)
        fh = open(path, "w" if fresh else "a", newline="")
        w = csv.writer(fh)
        if fresh:
            w.writerow(header)
            fh.flush()
        return fh, w

    def handle(self, ev: Event) -> None:
        """Write what `ev` adds to the run directory; a failed write raises RunWriteError naming the file."""
        try:
            self._handle(ev)
        except OSError as e:
            raise RunWriteError(self.dir / _written_file(ev, e), e) from None

    def _handle(self, ev: Event) -> None:
        if isinstance(ev, RunStarted):
            self._start(ev)
        elif isinstance(ev, EvalLogged):
            fh, w = self._metrics
            w.writerow([_fmt(ev.row.get(c, float("nan"))) for c in self._columns])
            fh.flush()
            self.summary.update(steps=ev.step, wall_s=ev.row.get("wall_s"))
        elif isinstance(ev, TokensLogged):
            fh, w = self._tokens
            g, va = ev.grad_norm, ev.val_acc
            for tok, n in enumerate(ev.updates):
                w.writerow([ev.step, tok, n, _fmt(g[tok]) if g is not None else "", _fmt(va[tok]) if va else ""])
            fh.flush()
        elif isinstance(ev, FourierLogged):
            if self._fourier is None:
                self._fourier = self._open("fourier.csv", ["step", "freq", "norm"])
            fh, w = self._fourier
            for k, v in enumerate(ev.norms):
                w.writerow([ev.step, k, _fmt(v)])
            fh.flush()
        elif isinstance(ev, CircuitLogged):
            self._write_circuit(ev)
        elif isinstance(ev, RunFinished):
            if RING in self._circuit:
                write_joins(self.dir)
            self.summary = dict(ev.summary)
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
            write_json_atomic(self.dir / "config.json", {**self.cfg.to_dict(), "_meta": meta})
        self._columns = ev.columns
        self._metrics = self._open("metrics.csv", list(ev.columns))
        self._tokens = self._open("tokens.csv", ["step", "token", "updates", "grad_norm", "val_acc"])
        if self.resume and (self.dir / "fourier.csv").exists():
            self._fourier = self._open("fourier.csv", ["step", "freq", "norm"])
        for name, header in ((KEYFREQ, KEYFREQ_HEADER), (RING, RING_HEADER)):
            if self.resume and (self.dir / name).exists():
                self._circuit[name] = self._open(name, header)
        old = read_summary(self.dir) if self.resume else {}
        self.summary = {
            **old,
            "status": "running",
            "steps": ev.step,
            "device": ev.device,
            "preset": self.cfg.preset,
            "seed": self.cfg.train.seed,
            **ev.tokens.fields(),  # a live run's readers see the token sets the evaluation uses (engine/run_record.py)
        }
        self.write_summary()

    def write_summary(self) -> None:
        try:
            write_json_atomic(self.dir / SUMMARY, self.summary)
        except OSError as e:
            raise RunWriteError(self.dir / SUMMARY, e) from None

    def close(self) -> None:
        """Close the CSV files. A file whose last write failed (a full disk) still holds that row in
        its buffer and fails again here; the row is lost either way and the fault already reported."""
        for h in (self._metrics, self._tokens, self._fourier, *self._circuit.values()):
            if h is not None:
                try:
                    h[0].close()
                except OSError:
                    pass
        self._metrics = self._tokens = self._fourier = None
        self._circuit = {}

    def _write_circuit(self, ev: CircuitLogged) -> None:
        """keyfreq.csv (one row per frequency) and ring.csv (one row per axis token) of one measurement."""
        for name, header in ((KEYFREQ, KEYFREQ_HEADER), (RING, RING_HEADER)):
            if name not in self._circuit:
                self._circuit[name] = self._open(name, header)
        fh, w = self._circuit[KEYFREQ]
        keys = set(ev.keys)
        for k, share in enumerate(ev.shares, start=1):
            w.writerow([ev.step, k, _fmt(share), int(k in keys)])
        fh.flush()
        fh, w = self._circuit[RING]
        for i, tok in enumerate(ev.tokens):
            vals = (ev.x[i], ev.y[i], ev.distance[i], ev.membership[i])
            w.writerow([ev.step, tok, *(_fmt(v) for v in vals), int(ev.rare[i]) if ev.rare else ""])
        fh.flush()


def _json_object(path: Path) -> dict[str, Any]:
    """A JSON file that must hold an object; ConfigError naming the file otherwise."""
    try:
        doc = json.loads(path.read_bytes())
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{path}: malformed JSON ({clean_text(e)})") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a JSON object, found {type(doc).__name__}")
    return doc


def _written_file(ev: Event, e: OSError) -> str:
    if e.filename:
        return Path(str(e.filename)).name.removesuffix(".tmp")
    if isinstance(ev, EvalLogged):
        return METRICS
    if isinstance(ev, TokensLogged):
        return "tokens.csv"
    if isinstance(ev, FourierLogged):
        return "fourier.csv"
    if isinstance(ev, CircuitLogged):
        return RING
    return SUMMARY if isinstance(ev, RunFinished) else METRICS


def read_summary(run_dir: Path) -> dict[str, Any]:
    """summary.json, or {} when it is missing; ConfigError when it is not a JSON object or a field the
    readers use has the wrong type or range (engine/schema.py)."""
    path = Path(run_dir) / SUMMARY
    try:
        return check_summary(path, _json_object(path))
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None


def read_config_doc(run_dir: str | Path) -> dict[str, Any]:
    """config.json as written (with its `_meta`); ConfigError naming the file when it is unusable."""
    path = Path(run_dir) / CONFIG
    try:
        return check_config(path, _json_object(path))
    except OSError:
        raise ConfigError(f"{run_dir}: not a run directory (no {CONFIG})") from None


def read_config(run_dir: Path) -> RunConfig:
    from engine.config import from_dict

    return from_dict(read_config_doc(run_dir), str(Path(run_dir) / CONFIG))


def _csv_lines(path: Path) -> list[list[str]]:
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


def read_group_doc(group_dir: str | Path) -> dict[str, Any]:
    """group.json, its fields and each member's checked (engine/schema.py); ConfigError naming the file."""
    return _checked_doc(Path(group_dir), GROUP_FILE, "sweep group", check_group)


def _checked_doc(
    d: Path, name: str, kind: str, check: Callable[[Path, dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """The JSON object `d/name` as `check` (engine/schema.py) passes it; ConfigError naming the file."""
    path = d / name
    if not path.is_file():
        raise ConfigError(f"{d}: not a {kind} directory (no {name})")
    try:
        return check(path, _json_object(path))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None


def csv_header(path: Path) -> list[str]:
    """The header of a run-log CSV, or [] when the file is missing or empty."""
    rows = _csv_lines(path)
    return rows[0] if rows else []


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a run-log CSV as dicts; a torn last line (killed mid-write) is dropped."""
    rows = _csv_lines(path)
    if not rows:
        return []
    header = rows[0]
    return [dict(zip(header, r, strict=True)) for r in rows[1:]]


def read_metrics(run_dir: Path) -> list[dict[str, float]]:
    """metrics.csv as numbers (an empty cell is NaN); ConfigError naming the file for anything else."""
    path = Path(run_dir) / METRICS
    rows = read_csv(path)
    if rows and "step" not in rows[0]:
        raise ConfigError(f"{path}: no step column")
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            out.append({k: (float(v) if v != "" else math.nan) for k, v in r.items()})
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


def write_joins(run_dir: Path) -> None:
    """joins.csv from ring.csv: each token's join step (engine/phases.py `join_steps`), rare or not."""
    from engine.phases import join_steps

    rows = read_csv(Path(run_dir) / RING)
    joined = join_steps(rows)
    rare = {int(r["token"]): r.get("rare", "") for r in rows}

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["token", "rare", "join_step"])
            for tok in sorted(joined):
                step = joined[tok]
                w.writerow([tok, rare.get(tok, ""), "" if step is None else step])

    replace_atomic(Path(run_dir) / JOINS, write)


def read_learned_steps(run_dir: str | Path) -> tuple[list[int | None], float]:
    """Each operand token's learned step (engine/columns.py learned_step) and the threshold: from
    summary.json where the run wrote them, else recomputed from tokens.csv (runs from before they were
    tracked, or a run still going). ConfigError when neither has them."""
    from engine.columns import LEARNED_ACC, learned_step

    d = Path(run_dir)
    summary = read_summary(d)
    got = summary.get("learned_step")
    if (
        isinstance(got, list)
        and all(v is None or isinstance(v, int) for v in got)
        and summary.get("status") != "running"
    ):
        return list(got), float(summary.get("learned_acc", LEARNED_ACC))
    rows = read_csv(d / "tokens.csv")
    p = int(read_config_doc(d).get("data", {}).get("p", 0) or 0)
    if not rows or not p:
        raise ConfigError(f"{d}: no per-token val_acc (tokens.csv) to find learned steps in")
    series: dict[int, tuple[list[int], list[float]]] = {t: ([], []) for t in range(p)}
    for r in rows:
        try:
            t, step = int(r["token"]), int(float(r["step"]))
            acc = float(r["val_acc"]) if r.get("val_acc") not in (None, "") else math.nan
        except (KeyError, ValueError):
            raise ConfigError(f"{d / 'tokens.csv'}: a row is not step,token,...,val_acc numbers") from None
        if 0 <= t < p:
            series[t][0].append(step)
            series[t][1].append(acc)
    return [learned_step(*series[t]) for t in range(p)], LEARNED_ACC


# --- groups and members (engine/sweep/spec.py, engine/sweep/member.py) -------------------------

RESULTS = "results.csv"  # a sweep group's one row per member (engine/sweep/results.py)


def read_results(group_dir: str | Path) -> list[dict[str, str]]:
    """results.csv's rows as strings ('' = none); a torn last line (a killed sweep) is dropped."""
    return read_csv(Path(group_dir) / RESULTS)


def write_results(group_dir: str | Path, columns: list[str], rows: list[dict[str, Any]]) -> None:
    """Replace results.csv atomically and durably (`replace_atomic`)."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as fh:
            w = csv.DictWriter(fh, columns, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)

    replace_atomic(Path(group_dir) / RESULTS, write)


def empty_run_dir(run_dir: Path) -> None:
    """Make a run directory, or empty one whose earlier start left no checkpoint (the lock file stays).

    A directory another live process writes is left alone: `RunInUse` names that process.
    """
    pid = lock_holder(run_dir)
    if pid is not None:
        raise RunInUse(f"{run_dir} is in use by pid {pid or '?'}")
    run_dir.mkdir(parents=True, exist_ok=True)
    for f in run_dir.iterdir():
        if f.is_file() and f.name != LOCK_FILE:
            f.unlink()


# --- tokens.csv, fourier.csv, keyfreq.csv and ring.csv, decoded into the events that wrote them ---


def read_tokens(run_dir: str | Path) -> list[TokensLogged]:
    """tokens.csv as one TokensLogged per evaluation step: updates, and grad norms and val_acc where written."""
    return _decoded(Path(run_dir), "tokens.csv", _tokens)


def read_fourier(run_dir: str | Path) -> list[FourierLogged]:
    """fourier.csv as one FourierLogged per step it was measured at (an empty norm is NaN)."""
    return _decoded(Path(run_dir), "fourier.csv", _fourier)


def read_circuit(run_dir: str | Path) -> list[CircuitLogged]:
    """keyfreq.csv and ring.csv (the progress probe) back into CircuitLogged events, one per measurement."""
    return _decoded(Path(run_dir), f"{KEYFREQ} or {RING}", _circuit)


def _decoded(run_dir: Path, names: str, decode: Callable[[Path], list[T]]) -> list[T]:
    """`decode(run_dir)`; a row whose cells are not what the engine writes is one ConfigError naming the file."""
    try:
        return decode(run_dir)
    except (KeyError, ValueError, TypeError):
        raise ConfigError(f"{run_dir}: {names}: a row does not hold the fields the engine writes") from None


def _tokens(run_dir: Path) -> list[TokensLogged]:
    by_step: dict[int, list[dict[str, str]]] = {}
    for tok in read_csv(run_dir / "tokens.csv"):
        by_step.setdefault(int(tok["step"]), []).append(tok)
    out = []
    for step, toks in sorted(by_step.items()):
        toks.sort(key=lambda r: int(r["token"]))
        grads = [r.get("grad_norm", "") for r in toks]
        grad = tuple(float(g) for g in grads) if all(grads) else None
        accs = [r.get("val_acc") for r in toks]
        acc = tuple(float(a) if a else math.nan for a in accs) if any(accs) else None
        out.append(TokensLogged(step, tuple(int(float(r["updates"])) for r in toks), grad, acc))
    return out


def _fourier(run_dir: Path) -> list[FourierLogged]:
    spectra: dict[int, list[float]] = {}
    for row in read_csv(run_dir / "fourier.csv"):
        spectra.setdefault(int(row["step"]), []).append(float(row["norm"] or "nan"))
    return [FourierLogged(step, tuple(spectra[step])) for step in sorted(spectra)]


def _circuit(run_dir: Path) -> list[CircuitLogged]:
    freqs: dict[int, list[dict[str, str]]] = {}
    for r in read_csv(run_dir / KEYFREQ):
        freqs.setdefault(int(r["step"]), []).append(r)
    rings: dict[int, list[dict[str, str]]] = {}
    for r in read_csv(run_dir / RING):
        rings.setdefault(int(r["step"]), []).append(r)

    def num(v: str) -> float:
        return float(v) if v else math.nan

    out = []
    for step in sorted(freqs):
        fr = sorted(freqs[step], key=lambda r: int(r["freq"]))
        toks = rings.get(step, [])
        out.append(
            CircuitLogged(
                step,
                tuple(num(r["share"]) for r in fr),
                tuple(int(r["freq"]) for r in fr if r["key"] == "1"),
                0,
                tuple(int(r["token"]) for r in toks),
                tuple(num(r["x"]) for r in toks),
                tuple(num(r["y"]) for r in toks),
                tuple(num(r["distance"]) for r in toks),
                tuple(num(r["membership"]) for r in toks),
                tuple(r["rare"] == "1" for r in toks),
            )
        )
    return out


# --- a whole-paper run's directory (engine/paper_record.py) ------------------------------------

PAPER_FILE = "paper.json"  # the record of `grok sweep --preset paper`: its sweeps, groups and segments


def is_paper_dir(path: str | Path) -> bool:
    """A paper directory is one with a paper.json."""
    return (Path(path) / PAPER_FILE).is_file()


def new_paper_dir(root: Path) -> Path:
    """<out>/<YYYYmmdd-HHMMSS>-paper/, with a -N suffix if taken; RunDirError if it cannot be made."""
    try:
        return unique_dir(Path(root), f"{time.strftime('%Y%m%d-%H%M%S')}-paper")
    except OSError as e:
        raise RunDirError(f"cannot create paper directory under {root}: {e.strerror or e}") from None


def read_paper_doc(paper_dir: str | Path) -> dict[str, Any]:
    """paper.json, its fields, sweeps and segments checked (engine/schema.py); ConfigError naming the file."""
    from engine.schema import check_paper

    return _checked_doc(Path(paper_dir), PAPER_FILE, "paper", check_paper)


def write_paper_doc(paper_dir: str | Path, doc: dict[str, Any]) -> None:
    """Replace paper.json atomically and durably (`write_json_atomic`); RunDirError, one line, on a failed write."""
    path = Path(paper_dir) / PAPER_FILE
    try:
        write_json_atomic(path, doc)
    except OSError as e:
        raise RunDirError(str(RunWriteError(path, e))) from None
