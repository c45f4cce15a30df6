"""The run directory: config.json, metrics.csv, tokens.csv, fourier.csv, summary.json, checkpoint.pt.

Rows are appended and flushed as they happen, so a crash, a signal or a killed process leaves every
row written so far readable. summary.json is replaced atomically.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from engine.config import ConfigError, RunConfig
from engine.events import EvalLogged, Event, FourierLogged, RunFinished, RunStarted, TokensLogged

CHECKPOINT = "checkpoint.pt"


class RunDirError(ConfigError):
    """The output directory cannot be created or written."""


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
        path = unique_dir(root, f"{time.strftime('%Y%m%d-%H%M%S')}-{preset or 'custom'}-s{seed}")
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


def write_json_atomic(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n")
    os.replace(tmp, path)


def truncate_csv(path: Path, max_step: int) -> None:
    """Drop rows past a checkpoint's step, so a resumed run appends where the checkpoint stands."""
    if not path.exists():
        return
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        return
    keep = [rows[0]] + [r for r in rows[1:] if r and r[0] != "" and int(float(r[0])) <= max_step]
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(keep)


class RunLog:
    """Consumes the event stream and writes the run directory."""

    def __init__(self, run_dir: Path, cfg: RunConfig, resume: bool = False) -> None:
        self.dir = run_dir
        self.cfg = cfg
        self.resume = resume
        self._metrics: Any = None
        self._tokens: Any = None
        self._fourier: Any = None
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
        if isinstance(ev, RunStarted):
            self._start(ev)
        elif isinstance(ev, EvalLogged):
            fh, w = self._metrics
            w.writerow([_fmt(ev.row.get(c, float("nan"))) for c in self._columns])
            fh.flush()
            self.summary.update(steps=ev.step, wall_s=ev.row.get("wall_s"))
        elif isinstance(ev, TokensLogged):
            fh, w = self._tokens
            g = ev.grad_norm
            for tok, n in enumerate(ev.updates):
                w.writerow([ev.step, tok, n, _fmt(g[tok]) if g is not None else ""])
            fh.flush()
        elif isinstance(ev, FourierLogged):
            if self._fourier is None:
                self._fourier = self._open("fourier.csv", ["step", "freq", "norm"])
            fh, w = self._fourier
            for k, v in enumerate(ev.norms):
                w.writerow([ev.step, k, _fmt(v)])
            fh.flush()
        elif isinstance(ev, RunFinished):
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
        self._tokens = self._open("tokens.csv", ["step", "token", "updates", "grad_norm"])
        if self.resume and (self.dir / "fourier.csv").exists():
            self._fourier = self._open("fourier.csv", ["step", "freq", "norm"])
        old = read_summary(self.dir) if self.resume else {}
        self.summary = {
            **old,
            "status": "running",
            "steps": ev.step,
            "device": ev.device,
            "preset": self.cfg.preset,
            "seed": self.cfg.train.seed,
        }
        self.write_summary()

    def write_summary(self) -> None:
        write_json_atomic(self.dir / "summary.json", self.summary)

    def close(self) -> None:
        for h in (self._metrics, self._tokens, self._fourier):
            if h is not None:
                h[0].close()
        self._metrics = self._tokens = self._fourier = None


def read_summary(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return {}


def read_config(run_dir: Path) -> RunConfig:
    from engine.config import from_dict

    path = run_dir / "config.json"
    try:
        doc = json.loads(path.read_text())
    except OSError:
        raise ConfigError(f"{run_dir}: not a run directory (no config.json)") from None
    except ValueError as e:
        raise ConfigError(f"{path}: malformed JSON: {e}") from None
    return from_dict(doc, str(path))


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a run-log CSV; a torn last line (killed mid-write) is dropped."""
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    if rows and None in rows[-1].values():
        rows.pop()
    return rows


def read_metrics(run_dir: Path) -> list[dict[str, float]]:
    out = []
    for r in read_csv(run_dir / "metrics.csv"):
        out.append({k: (float(v) if v not in ("", None) else float("nan")) for k, v in r.items()})
    return out
