"""What the TUI knows about one run: the engine's events folded into capped series, thread-safely.

The engine thread calls `apply` for every event; the UI timer reads under the same lock. Nothing
here draws; `plot_version` tells the charts whether anything changed since they last drew. The config,
the phases and the token sets come from the engine (RunStarted, EvalLogged, RunFinished, or the run
record of engine/records/run.py for a run directory), never recomputed here.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

from engine.config import RunConfig
from engine.events import (
    CircuitLogged,
    EvalLogged,
    Event,
    FourierLogged,
    RunFinished,
    RunStarted,
    Status,
    StatusChanged,
    StepsTaken,
    TokenSets,
    TokensLogged,
)
from engine.rundir import clean_text
from engine.train.phases import Phases
from grok_tui.charts.series import Raw, Snapshots, Trace
from grok_tui.eta import Pace

HISTORY = 512  # logged evaluations kept for the time scrubber (evenly spaced once a run has more)

__all__ = ["RunData", "clean_text", "history", "load_run"]


class RunData:
    """Buffered state of a live or finished run."""

    def __init__(self, label: str = "") -> None:
        self.lock = threading.Lock()
        self.plot_version = 0  # bumped only by events that change a chart (not StepsTaken)
        self.label = clean_text(label)
        self.status: str = Status.STARTING
        self.config: RunConfig | None = None  # from RunStarted
        self.tokens = TokenSets()  # the split's rare, absent and target tokens (RunStarted)
        self.phases = Phases()  # as the engine's phase trackers saw them (EvalLogged, RunFinished)
        self.columns: tuple[str, ...] = ()
        self.device = ""
        self.run_dir = ""
        self.step = 0
        self.max_steps = 1
        self.steps_per_s = 0.0
        self.pace = Pace()  # the ETA's rate: the mean since the first report (grok_tui/eta.py)
        self.updates: tuple[int, ...] = ()
        self.grad = Snapshots()
        # (step, (updates, per-token val_acc)) and (step, spectrum) at logged evaluations: the scrubber
        self.token_history = Snapshots(HISTORY)
        self.fourier_history = Snapshots(HISTORY)
        self.circuit_history = Snapshots(HISTORY)  # (step, CircuitLogged): the progress probe (Circuit view)
        self.traces: dict[str, Trace] = {}
        self.raw: dict[str, Raw] = {}  # every logged value (capped), for zoom, cursor and smoothing
        self.last_row: dict[str, float] = {}
        self.summary: dict[str, Any] = {}
        self.fork_marks: tuple[tuple[int, str], ...] = ()  # a fork's F and I markers (engine/rundir/lineage.py)
        self.fork_changes = 0  # its interventions and changed settings: not its preset's run, nor its prediction
        self.error = ""

    # --- written by the engine thread ------------------------------------------------------------

    def apply(self, ev: Event) -> None:
        with self.lock:
            self._apply(ev)
            if not isinstance(ev, StepsTaken | StatusChanged):
                self.plot_version += 1

    def _apply(self, ev: Event) -> None:
        if isinstance(ev, StepsTaken):
            self.step, self.steps_per_s = ev.step, ev.steps_per_s
            self.pace.observe(ev.step, ev.wall_s)
        elif isinstance(ev, EvalLogged):
            self._row(ev.step, ev.row)
            self.phases = self.phases.merged(Phases.of(vars(ev)))  # as the engine's trackers saw them
        elif isinstance(ev, TokensLogged):
            self.updates = ev.updates
            self.token_history.add(ev.step, (ev.updates, tuple(ev.val_acc) if ev.val_acc is not None else ()))
            if ev.grad_norm is not None:
                self.grad.add(ev.step, ev.grad_norm)
        elif isinstance(ev, FourierLogged):
            self.fourier_history.add(ev.step, ev.norms)
        elif isinstance(ev, CircuitLogged):
            self.circuit_history.add(ev.step, ev)
        elif isinstance(ev, RunStarted):
            self.config, self.columns, self.device = ev.config, ev.columns, clean_text(ev.device)
            self.tokens = ev.tokens
            self.run_dir, self.step, self.max_steps = ev.run_dir, ev.step, max(ev.max_steps, 1)
            self.status = Status.RUNNING
            if ev.run_dir:  # a fork's lineage and interventions.csv, written before its first step
                from engine.records.run import fork_changes, fork_marks

                self.fork_marks = fork_marks(ev.run_dir)
                self.fork_changes = fork_changes(ev.run_dir)
        elif isinstance(ev, StatusChanged):
            self.status = ev.status
        elif isinstance(ev, RunFinished):
            self.status, self.summary = clean_text(ev.status), ev.summary.doc()
            self.error = clean_text(ev.error or ev.summary.error or "")
            self.phases = self.phases.merged(Phases.of(ev.summary.doc()))

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

    def preload(self, events: list[Event], phases: Phases) -> None:
        """A resumed run's or a fork's logged history before its first step (`history`)."""
        for ev in events:
            self.apply(ev)
        with self.lock:
            self.phases = phases.merged(self.phases)
            self.plot_version += 1

    def fail(self, error: str) -> None:
        """The engine thread raised: keep what arrived, mark the run failed."""
        with self.lock:
            self.status, self.error = Status.FAILED, clean_text(error)
            self.plot_version += 1

    # --- read by the UI ------------------------------------------------------------------------

    @property
    def preset(self) -> str:
        return clean_text((self.config.preset if self.config else "") or self.label or "custom")

    @property
    def live(self) -> bool:
        return self.status in (Status.STARTING, Status.RUNNING, Status.PAUSED)

    @property
    def p(self) -> int:
        """The modulus: operand tokens 0..p-1 (0 before RunStarted)."""
        return self.config.data.p if self.config else 0

    def probe_off(self, probe: str) -> bool:
        """True when the run logs columns but `probe.<probe>_every` is 0: the probe never runs."""
        every = getattr(self.config.probe, f"{probe}_every", 0) if self.config else 0
        return bool(self.columns) and not every

    def has(self, column: str) -> bool:
        return column in self.columns

    def latest(self, column: str) -> float:
        v = self.last_row.get(column, float("nan"))
        return float(v) if isinstance(v, int | float) else float("nan")

    def eta_s(self) -> float:
        if not self.live:
            return math.nan
        return self.pace.eta_s(self.step, self.max_steps, self.steps_per_s)

    def logged_steps(self) -> list[int]:
        """Steps of the evaluations the scrubber can show (token counts and, when on, spectra)."""
        steps = {s for s, _ in self.token_history.items} | {s for s, _ in self.fourier_history.items}
        return sorted(steps | {s for s, _ in self.circuit_history.items})


def history(run_dir: str | Path, upto: int) -> tuple[list[Event], Phases]:
    """What a run directory logged up to step `upto`, as the events that wrote it, and its phases: a resumed
    run or a fork starts at `upto` with its parent's rows before it (engine/train/fork.py copies them), and
    the charts draw them, so a fork shows its parent's history before F and its own after."""
    from engine.records.run import read_run

    rec = read_run(run_dir)  # ConfigError naming the file for anything unreadable
    out: list[Event] = [EvalLogged(int(r["step"]), r) for r in rec.rows if r["step"] <= upto]
    logged: list[Event] = [*rec.tokens_logged, *rec.fourier, *rec.circuit]  # engine/rundir/probe_logs.py
    out += [ev for ev in logged if getattr(ev, "step", 0) <= upto]
    return out, rec.phases


def load_run(run_dir: str | Path) -> RunData:
    """A run directory read back into a RunData, for --open and compare (its record, engine/records/run.py)."""
    from engine.records.run import read_run

    rec = read_run(run_dir)  # ConfigError naming the file for anything unreadable
    meta = rec.meta
    data = RunData(label=rec.path.name)
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
            max_steps=rec.config.train.max_steps,
            columns=tuple(rec.rows[0].keys()) if rec.rows else (),
            run_dir=str(rec.path),
            tokens=rec.tokens,
        )
    )
    for r in rec.rows:
        data.apply(EvalLogged(int(r["step"]), r))
    logged: list[Event] = [
        *rec.tokens_logged,
        *rec.fourier,
        *rec.circuit,
    ]  # the probes' logs (engine/rundir/probe_logs.py)
    for ev in logged:
        data.apply(ev)
    if rec.status != Status.RUNNING:  # a run another process is writing shows as it stands
        data.apply(RunFinished(rec.status, rec.summary, rec.summary.error or ""))
    with data.lock:
        data.status, data.step, data.phases = rec.status, rec.step, rec.phases
    return data
