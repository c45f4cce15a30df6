"""A scripted stand-in for engine.train.run.Run: the same API and run directory, events from a script."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import threading
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.config import RunConfig
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
from engine.rundir import RunLog, new_run_dir
from engine.summary import RunSummary
from engine.task.metrics import split_tokens
from engine.train.phases import PhaseTracker

# The engine's row columns the script fills in (engine/train/evaluation.py), then the probes'.
BASE_COLUMNS: tuple[str, ...] = ("step", "epoch", "wall_s", "train_loss", "train_acc", "val_loss", "val_acc", "lr")
BASE_COLUMNS += ("lr_embed", "lr_ratio", "f_E", "val_acc_rare", "val_acc_common")
CARRIES_PHASES = "memorized_step" in {f.name for f in dataclasses.fields(EvalLogged)}
PROBE_COLUMNS = ("hess_E", "hess_W", "sigma_E", "sigma_W", "sigma_ratio", "rank_E", "rank_W", "rank_EW")


def script(cfg: RunConfig, probes: bool = True, evals: int = 40, fail_at: int | None = None) -> Iterator[Event]:
    """A deterministic grokking curve: memorize early, generalize late (log-spaced eval steps)."""
    p, steps = cfg.data.p, cfg.train.max_steps
    cols = BASE_COLUMNS + (PROBE_COLUMNS if probes else ())
    freq = (*(int(200 * math.exp(-3 * a / (p - 1))) + 5 for a in range(p)), 600, 600)
    yield RunStarted(cfg, "cpu", 600, 400, p + 2, freq, 0, steps, cols, tokens=split_tokens(cfg))
    step = -1
    phases = PhaseTracker(cfg.train.target_val_acc, 0)
    for i in range(evals + 1):
        step = max(round(steps ** (i / evals)) if i else 0, step + 1)  # log-spaced, distinct
        if fail_at is not None and i == fail_at:
            raise RuntimeError("scripted engine fault")
        yield StepsTaken(step, step // 10, step / 100, 1234.0)
        u = math.log10(max(step, 1)) / math.log10(steps)
        row = dict.fromkeys(cols, float("nan"))
        row.update(
            step=step,
            epoch=step // 10,
            wall_s=step / 100,
            train_loss=4.0 * math.exp(-6 * u) + 1e-3,
            train_acc=min(1.0, 1.6 * u),
            val_loss=4.0 - 3.0 * u,
            val_acc=1 / (1 + math.exp(-20 * (u - 0.8))),
            lr=1e-3,
            lr_embed=1e-3,
            lr_ratio=1.0 + 9 * u,
            f_E=0.5,
            val_acc_rare=1 / (1 + math.exp(-20 * (u - 0.9))),
            val_acc_common=1 / (1 + math.exp(-20 * (u - 0.78))),
        )
        if probes:
            row.update(
                hess_E=0.5 + 10 * u,
                hess_W=50 * (1.2 - u),
                sigma_E=3 + u,
                sigma_W=2.0,
                sigma_ratio=(3 + u) / 2.0,
                rank_E=8.0,
                rank_W=30 - 10 * u,
                rank_EW=8 - 4 * u,
            )
        phases.observe(step, row)
        # the engine's EvalLogged carries the phases its PhaseTracker saw (engine/train/phases.py)
        marks = {"memorized_step": phases.memorized_step, "generalized_step": phases.generalized_step}
        yield EvalLogged(step, row, **(marks if CARRIES_PHASES else {}))
        val = (*(row["val_acc"] * (0.5 + 0.5 * f / 205) for f in freq[:p]), math.nan, math.nan)
        updates = tuple(int(f * step / 50) for f in freq)
        grad = tuple(f / 200 * (1 + (step + k) % 3) for k, f in enumerate(freq)) if probes else None
        yield TokensLogged(step, updates, grad, val)
        if probes:
            yield FourierLogged(step, tuple(1.0 + 10 * u * (k % 7 == 0) for k in range(p // 2 + 1)))


HOLD_LIMIT_S = 120.0  # a held run ends by itself after this, should nothing ever stop it


class ScriptedRun:
    """Run's API (events, pause, unpause, stop, dir, status, summary) over a script.

    With `hold`, the run stays in progress after the script until stopped, like a long run.
    """

    def __init__(self, cfg: RunConfig, out: str | Path, hold: bool = False, dirname: str = "", **kw: Any) -> None:
        self.cfg = cfg
        if dirname:
            self.dir = Path(out) / dirname
            self.dir.mkdir(parents=True)
        else:
            self.dir = new_run_dir(Path(out), cfg.preset, cfg.train.seed)
        self.log = RunLog(self.dir, cfg)
        self.hold, self.kw = hold, kw
        self._stop: str | None = None
        self._pause = threading.Event()
        self.status: str = "running"
        self.summary: dict[str, Any] = {}
        self.closed = False
        self.step = 0  # the last step the script logged

    def stop(self, status: str = "interrupted") -> None:
        self._stop = status

    def pause(self) -> None:
        self._pause.set()

    def unpause(self) -> None:
        self._pause.clear()

    def _summary(self, status: str) -> dict[str, Any]:
        # the steps the script took: a summary past its logs would be a log that lies (engine/rundir/csvlog.py)
        return {"status": status, "steps": self.step, "preset": self.cfg.preset}

    def _events(self) -> Iterator[Event]:
        for ev in script(self.cfg, **self.kw):
            if self._stop is not None:
                break
            yield ev
        deadline = time.monotonic() + HOLD_LIMIT_S
        while self.hold and self._stop is None and time.monotonic() < deadline:
            if self._pause.is_set():
                yield StatusChanged("paused")
                while self._pause.is_set() and self._stop is None:
                    time.sleep(0.01)
                yield StatusChanged("running")
            time.sleep(0.01)
        yield RunFinished(self._stop or "finished", RunSummary.written(self._summary(self._stop or "finished")))

    def events(self) -> Generator[Event, None, None]:
        try:
            for ev in self._events():
                if isinstance(ev, RunStarted):
                    ev = dataclasses.replace(ev, run_dir=str(self.dir))
                if isinstance(ev, EvalLogged):
                    self.step = ev.step
                if isinstance(ev, RunFinished):
                    self.status, self.summary = ev.status, ev.summary.doc()
                self.log.handle(ev)
                yield ev
        except GeneratorExit:
            self.status, self.summary = "interrupted", self._summary("interrupted")
            self.log.summary = self.summary
            self.log.write_summary()
            raise
        finally:
            self.log.close()
            self.closed = True


@pytest.fixture
def scripted() -> Callable[..., Callable[[RunConfig, str | Path], ScriptedRun]]:
    """scripted(hold=..., probes=...) -> a run factory for create_app; `.runs` lists what it made."""

    def make(**kw: Any) -> Any:
        runs: list[ScriptedRun] = []

        def factory(cfg: RunConfig, out: str | Path) -> ScriptedRun:
            run = ScriptedRun(cfg, out, **kw)
            runs.append(run)
            return run

        factory.runs = runs  # type: ignore[attr-defined]
        return factory

    return make


WAIT_S = 60.0  # a deadline that only stops a hang: on a loaded machine a redraw may take seconds


async def wait_for(pilot: Any, cond: Callable[[], bool], timeout: float = WAIT_S) -> None:
    """Let the app run until cond() holds; fail only if it never does (a hang), after `timeout`."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for the app")
        await pilot.pause()  # the app handles what is pending
        await asyncio.sleep(0.01)  # and its timers and worker threads get their turn


def painted(app: Any) -> bool:
    """The status bar and every visible chart of the current view show the run's current data on screen."""
    from grok_tui.widgets.chart import Chart

    if app.screen is not app.main_screen or app.status_bar._key is None:
        return False
    pane = app.tabs.active_pane
    charts = [c for c in pane.query(Chart) if c.display] if pane is not None else []
    return all(not c.stale(app.chart_stamp) and c._key is not None for c in charts)


def aio(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run an async test body with asyncio.run (no asyncio plugin needed)."""

    @functools.wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        return asyncio.run(fn(*a, **kw))

    return wrapper
