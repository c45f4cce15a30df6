"""What the TUI knows about one run: the engine's events folded into capped series, thread-safely.

The engine thread calls `apply` for every event; the UI timer reads under the same lock. Nothing
here draws; `version` tells the charts whether anything changed since they last drew.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

from engine.events import (
    EvalLogged,
    Event,
    FourierLogged,
    RunFinished,
    RunStarted,
    StatusChanged,
    StepsTaken,
    TokensLogged,
)
from engine.phases import GENERALIZED_ACC, MEMORIZED_ACC
from grok_tui.charts.series import Snapshots, Trace


class RunData:
    """Buffered state of a live or finished run."""

    def __init__(self, label: str = "") -> None:
        self.lock = threading.Lock()
        self.version = 0  # bumped by every event (the status bar)
        self.plot_version = 0  # bumped only by events that change a chart (not StepsTaken)
        self.label = label
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
        self.grad = Snapshots()
        self.fourier: tuple[float, ...] = ()
        self.fourier_step = 0
        self.traces: dict[str, Trace] = {}
        self.last_row: dict[str, float] = {}
        self.memorized_step: int | None = None
        self.generalized_step: int | None = None
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
        elif isinstance(ev, TokensLogged):
            self.updates = ev.updates
            if ev.grad_norm is not None:
                self.grad.add(ev.step, ev.grad_norm)
        elif isinstance(ev, FourierLogged):
            self.fourier, self.fourier_step = ev.norms, ev.step
        elif isinstance(ev, RunStarted):
            self.config, self.columns, self.device = ev.config, ev.columns, ev.device
            self.run_dir, self.step, self.max_steps = ev.run_dir, ev.step, max(ev.max_steps, 1)
            self.token_freq = ev.token_freq
            self.status = "running"
        elif isinstance(ev, StatusChanged):
            self.status = ev.status
        elif isinstance(ev, RunFinished):
            self.status, self.summary = ev.status, dict(ev.summary)
            self.error = ev.error or str(ev.summary.get("error", ""))
            for key in ("memorized_step", "generalized_step"):
                if ev.summary.get(key) is not None:
                    setattr(self, key, int(ev.summary[key]))

    def _row(self, step: int, row: dict[str, float]) -> None:
        self.step = max(self.step, step)
        self.last_row = row
        for col, y in row.items():
            if col == "step" or not isinstance(y, int | float):
                continue
            trace = self.traces.get(col)
            if trace is None:
                trace = self.traces[col] = Trace(self.max_steps)
            trace.add(step, float(y))
        s_e, s_w = row.get("sigma_E"), row.get("sigma_W")
        if s_e is not None and s_w is not None and s_w > 0 and math.isfinite(s_e / s_w):
            # σmax(E)/σmax(W), the spectral factor of adaptive Adam-LR (eq. 24)
            trace = self.traces.get("sigma_ratio") or self.traces.setdefault("sigma_ratio", Trace(self.max_steps))
            trace.add(step, s_e / s_w)
        # Phase markers as the engine defines them (engine/phases.py), live from the rows.
        if self.memorized_step is None and row.get("train_acc", 0.0) >= MEMORIZED_ACC:
            self.memorized_step = step
        if self.generalized_step is None and row.get("val_acc", 0.0) >= GENERALIZED_ACC:
            self.generalized_step = step

    def fail(self, error: str) -> None:
        """The engine thread raised: keep what arrived, mark the run failed."""
        with self.lock:
            self.status, self.error = "failed", error
            self.version += 1
            self.plot_version += 1

    # --- read by the UI ------------------------------------------------------------------------

    @property
    def preset(self) -> str:
        return str(self.config.get("preset") or self.label or "custom")

    @property
    def delay(self) -> int | None:
        m, g = self.memorized_step, self.generalized_step
        return g - m if m is not None and g is not None else None

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


def load_run(run_dir: str | Path) -> RunData:
    """A finished (or still running) run directory read back into a RunData, for --open and compare."""
    import json

    from engine.rundir import read_csv, read_metrics, read_summary

    path = Path(run_dir)
    try:
        doc = json.loads((path / "config.json").read_text())
    except (OSError, ValueError):
        from engine.config import ConfigError

        raise ConfigError(f"{path}: not a run directory (no readable config.json)") from None
    meta = doc.get("_meta", {})
    rows = read_metrics(path)
    columns = tuple(rows[0].keys()) if rows else ()
    data = RunData(label=path.name)
    data.apply(
        RunStarted(
            config={k: v for k, v in doc.items() if k != "_meta"},
            device=str(meta.get("device", "")),
            n_train=int(meta.get("n_train", 0)),
            n_test=int(meta.get("n_test", 0)),
            vocab_size=len(meta.get("token_freq", [])),
            token_freq=tuple(meta.get("token_freq", [])),
            step=0,
            max_steps=int(doc.get("train", {}).get("max_steps", 1)),
            columns=columns,
            run_dir=str(path),
        )
    )
    for r in rows:
        data.apply(EvalLogged(int(r["step"]), r))
    by_step: dict[int, list[dict[str, str]]] = {}
    for r in read_csv(path / "tokens.csv"):
        by_step.setdefault(int(r["step"]), []).append(r)
    for step, toks in sorted(by_step.items()):
        toks.sort(key=lambda r: int(r["token"]))
        grads = [r.get("grad_norm", "") for r in toks]
        grad = tuple(float(g) for g in grads) if all(grads) else None
        data.apply(TokensLogged(step, tuple(int(r["updates"]) for r in toks), grad))
    spectra: dict[int, list[float]] = {}
    for r in read_csv(path / "fourier.csv"):
        spectra.setdefault(int(r["step"]), []).append(float(r["norm"] or "nan"))
    if spectra:
        step = max(spectra)
        data.apply(FourierLogged(step, tuple(spectra[step])))
    summary = read_summary(path)
    status = str(summary.get("status", "finished"))
    if status == "running":  # another process is writing it: show it as it stands
        data.status = "running"
    else:
        data.apply(RunFinished(status, summary, str(summary.get("error", ""))))
    with data.lock:
        data.step = int(summary.get("steps", data.step) or data.step)
    return data
