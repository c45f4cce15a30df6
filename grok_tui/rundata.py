"""What the TUI knows about one run: the engine's events folded into capped series, thread-safely.

The engine thread calls `apply` for every event; the UI timer reads under the same lock. Nothing
here draws; `version` tells the charts whether anything changed since they last drew. Phases
come from the engine (EvalLogged, the summary, or engine/phases.py for an old run directory),
never recomputed here.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

from engine.events import (
    CircuitLogged,
    EvalLogged,
    Event,
    FourierLogged,
    RunFinished,
    RunStarted,
    StatusChanged,
    StepsTaken,
    TokensLogged,
)
from engine.phases import grokking_delay
from engine.rundir import clean_text
from grok_tui.charts.series import Raw, Snapshots, Trace

PHASE_KEYS = ("memorized_step", "generalized_step", "circuit_step", "cleanup_step")  # engine/phases.py
HISTORY = 512  # logged evaluations kept for the time scrubber (evenly spaced once a run has more)

__all__ = ["RunData", "clean_text", "load_run"]


class RunData:
    """Buffered state of a live or finished run."""

    def __init__(self, label: str = "") -> None:
        self.lock = threading.Lock()
        self.version = 0  # bumped by every event (the status bar)
        self.plot_version = 0  # bumped only by events that change a chart (not StepsTaken)
        self.label = clean_text(label)
        self.status = "starting"
        self.config: dict[str, Any] = {}
        self.columns: tuple[str, ...] = ()
        self.device = ""
        self.run_dir = ""
        self.step = 0
        self.max_steps = 1
        self.steps_per_s = 0.0
        self.token_freq: tuple[int, ...] = ()
        self.updates: tuple[int, ...] = ()
        self.token_val_acc: tuple[float, ...] = ()
        self.grad = Snapshots()
        # (step, (updates, per-token val_acc)) and (step, spectrum) at logged evaluations: the scrubber
        self.token_history = Snapshots(HISTORY)
        self.fourier_history = Snapshots(HISTORY)
        self.fourier: tuple[float, ...] = ()
        self.fourier_step = 0
        self.circuit_history = Snapshots(HISTORY)  # (step, CircuitLogged): the progress probe (Circuit view)
        self.traces: dict[str, Trace] = {}
        self.raw: dict[str, Raw] = {}  # every logged value (capped), for zoom, cursor and smoothing
        self.last_row: dict[str, float] = {}
        self.memorized_step: int | None = None
        self.generalized_step: int | None = None
        self.circuit_step: int | None = None  # circuit formation and cleanup (engine/phases.py)
        self.cleanup_step: int | None = None
        self.summary: dict[str, Any] = {}
        self.error = ""

    # --- written by the engine thread ------------------------------------------------------------

    def apply(self, ev: Event) -> None:
        with self.lock:
            self._apply(ev)
            self.version += 1
            if not isinstance(ev, StepsTaken | StatusChanged):
                self.plot_version += 1

    def _apply(self, ev: Event) -> None:
        if isinstance(ev, StepsTaken):
            self.step, self.steps_per_s = ev.step, ev.steps_per_s
        elif isinstance(ev, EvalLogged):
            self._row(ev.step, ev.row)
            # the phases as the engine's PhaseTracker saw them after this evaluation
            for key in PHASE_KEYS:
                v = getattr(ev, key, None)
                if v is not None:
                    setattr(self, key, int(v))
        elif isinstance(ev, TokensLogged):
            self.updates = ev.updates
            self.token_val_acc = tuple(ev.val_acc) if ev.val_acc is not None else ()
            self.token_history.add(ev.step, (ev.updates, self.token_val_acc))
            if ev.grad_norm is not None:
                self.grad.add(ev.step, ev.grad_norm)
        elif isinstance(ev, FourierLogged):
            self.fourier, self.fourier_step = ev.norms, ev.step
            self.fourier_history.add(ev.step, ev.norms)
        elif isinstance(ev, CircuitLogged):
            self.circuit_history.add(ev.step, ev)
        elif isinstance(ev, RunStarted):
            self.config, self.columns, self.device = ev.config, ev.columns, clean_text(ev.device)
            self.run_dir, self.step, self.max_steps = ev.run_dir, ev.step, max(ev.max_steps, 1)
            self.token_freq = ev.token_freq
            self.status = "running"
        elif isinstance(ev, StatusChanged):
            self.status = ev.status
        elif isinstance(ev, RunFinished):
            self.status, self.summary = clean_text(ev.status), dict(ev.summary)
            self.error = clean_text(ev.error or str(ev.summary.get("error", "")))
            for key in PHASE_KEYS:
                v = ev.summary.get(key)
                if isinstance(v, int | float) and math.isfinite(v):
                    setattr(self, key, int(v))

    def _row(self, step: int, row: dict[str, float]) -> None:
        self.step = max(self.step, step)
        self.last_row = row
        for col, y in row.items():
            if col == "step" or not isinstance(y, int | float):
                continue
            trace = self.traces.get(col)
            if trace is None:
                trace = self.traces[col] = Trace(self.max_steps)
                self.raw[col] = Raw()
            trace.add(step, float(y))
            self.raw[col].add(step, float(y))

    def fail(self, error: str) -> None:
        """The engine thread raised: keep what arrived, mark the run failed."""
        with self.lock:
            self.status, self.error = "failed", clean_text(error)
            self.version += 1
            self.plot_version += 1

    # --- read by the UI ------------------------------------------------------------------------

    @property
    def preset(self) -> str:
        return clean_text(self.config.get("preset") or self.label or "custom")

    @property
    def delay(self) -> int | None:
        return grokking_delay(self.memorized_step, self.generalized_step)

    @property
    def live(self) -> bool:
        return self.status in ("starting", "running", "paused")

    def has(self, column: str) -> bool:
        return column in self.columns

    def latest(self, column: str) -> float:
        v = self.last_row.get(column, float("nan"))
        return float(v) if isinstance(v, int | float) else float("nan")

    def eta_s(self) -> float:
        if self.steps_per_s <= 0 or not self.live:
            return math.nan
        return (self.max_steps - self.step) / self.steps_per_s

    def logged_steps(self) -> list[int]:
        """Steps of the evaluations the scrubber can show (token counts and, when on, spectra)."""
        steps = {s for s, _ in self.token_history.items} | {s for s, _ in self.fourier_history.items}
        return sorted(steps | {s for s, _ in self.circuit_history.items})


def load_run(run_dir: str | Path) -> RunData:
    """A run directory read back into a RunData, for --open and compare (through engine/rundir.py)."""
    from engine.phases import phases_so_far
    from engine.rundir import read_fourier, read_run, read_tokens

    rec = read_run(run_dir)  # ConfigError naming the file for anything unreadable
    path = rec.path
    meta = rec.meta
    columns = tuple(rec.rows[0].keys()) if rec.rows else ()
    train = rec.config.get("train", {}) if isinstance(rec.config.get("train"), dict) else {}
    data = RunData(label=path.name)
    freq = meta.get("token_freq", [])
    data.apply(
        RunStarted(
            config=rec.config,
            device=str(meta.get("device", "")),
            n_train=int(meta.get("n_train", 0)),
            n_test=int(meta.get("n_test", 0)),
            vocab_size=len(freq),
            token_freq=tuple(int(f) for f in freq),
            step=0,
            max_steps=int(train.get("max_steps", 1)),
            columns=columns,
            run_dir=str(path),
        )
    )
    for r in rec.rows:
        data.apply(EvalLogged(int(r["step"]), r))
    for ev in [*read_tokens(path), *read_fourier(path)]:  # decoded by engine/rundir.py
        data.apply(ev)
    for ev in read_circuit(path):
        data.apply(ev)
    summary = dict(rec.summary)
    needed = {"step", "train_acc", "val_acc", "train_loss"}
    lagging = rec.status in ("running", "dead") and summary.get("memorized_step") is None
    if rec.rows and lagging and needed <= rec.rows[0].keys():
        # the summary lags a live or killed run: the phases from its rows, by the engine's rule
        summary.update(phases_so_far(rec.config, rec.rows))
    if rec.status == "running":  # another process is writing it: show it as it stands
        with data.lock:
            data.status = rec.status
            for key in PHASE_KEYS:
                if summary.get(key) is not None:
                    setattr(data, key, int(summary[key]))
    else:
        data.apply(RunFinished(rec.status or "finished", summary, str(summary.get("error", ""))))
    with data.lock:
        data.step = rec.step
    return data


def read_circuit(run_dir: Path) -> list[CircuitLogged]:
    """keyfreq.csv and ring.csv (the progress probe) back into CircuitLogged events, one per measurement."""
    from engine.rundir import KEYFREQ, RING, read_csv

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
