"""Headless progress for `grok run`: a rich line on a TTY, plain lines otherwise."""

from __future__ import annotations

import sys
from typing import Any

from engine.events import EvalLogged, Event, RunStarted, StepsTaken


def _eta(remaining_steps: int, sps: float) -> str:
    if sps <= 0:
        return "?"
    s = int(remaining_steps / sps)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class PlainProgress:
    """One line every `every` evaluations; for pipes, nohup and CI."""

    def __init__(self, every: int = 10, stream: Any = None) -> None:
        self.every = max(every, 1)
        self.stream = stream or sys.stdout
        self.max_steps = 0
        self.sps = 0.0
        self.n_evals = 0
        self.dead = False

    def _print(self, line: str) -> None:
        if self.dead:
            return
        try:
            print(line, file=self.stream, flush=True)
        except OSError:  # the terminal went away (SIGHUP): keep training, stop printing
            self.dead = True

    def handle(self, ev: Event) -> None:
        if isinstance(ev, RunStarted):
            self.max_steps = ev.max_steps
            self._print(
                f"run {ev.run_dir}  device {ev.device}  train {ev.n_train}  test {ev.n_test}  "
                f"steps {ev.step}->{ev.max_steps}"
            )
        elif isinstance(ev, StepsTaken):
            self.sps = ev.steps_per_s
        elif isinstance(ev, EvalLogged):
            self.n_evals += 1
            if self.n_evals % self.every == 1 or self.every == 1:
                r = ev.row
                self._print(
                    f"step {ev.step:>7}/{self.max_steps}  train_acc {r['train_acc']:.4f}  "
                    f"val_acc {r['val_acc']:.4f}  train_loss {r['train_loss']:.4g}  "
                    f"{self.sps:6.1f} steps/s  eta {_eta(self.max_steps - ev.step, self.sps)}"
                )

    def close(self) -> None:
        pass


class RichProgress:
    """A live rich progress line: step, steps/s, train/val accuracy and ETA."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[sps]:>6.1f} steps/s"),
            TextColumn("train {task.fields[tr]:.3f}  val {task.fields[va]:.3f}"),
            TimeRemainingColumn(),
            refresh_per_second=4,
        )
        self.task: Any = None
        self.dead = False

    def handle(self, ev: Event) -> None:
        if self.dead:
            return
        try:
            if isinstance(ev, RunStarted):
                self.progress.start()
                self.task = self.progress.add_task(
                    ev.config.get("preset") or "run", total=ev.max_steps, completed=ev.step, sps=0.0, tr=0.0, va=0.0
                )
            elif isinstance(ev, StepsTaken) and self.task is not None:
                self.progress.update(self.task, completed=ev.step, sps=ev.steps_per_s)
            elif isinstance(ev, EvalLogged) and self.task is not None:
                self.progress.update(self.task, completed=ev.step, tr=ev.row["train_acc"], va=ev.row["val_acc"])
        except OSError:
            self.dead = True

    def close(self) -> None:
        try:
            self.progress.stop()
        except OSError:
            pass


class QuietProgress:
    def handle(self, ev: Event) -> None:
        pass

    def close(self) -> None:
        pass


def make_progress(quiet: bool, every: int = 10) -> Any:
    if quiet:
        return QuietProgress()
    if sys.stdout.isatty():
        return RichProgress()
    return PlainProgress(every)
