"""Headless progress for `grok run`: a rich line on a TTY, plain lines otherwise."""

from __future__ import annotations

import contextlib
import sys
from typing import IO, Any, Protocol, TypeVar

from engine.events import EvalLogged, Event, RunFinished, RunStarted, StepsTaken
from engine.train.phases import Phases, early_stop_note
from grok_tui.commands.width import columns
from grok_tui.eta import Pace, format_eta

E = TypeVar("E", contravariant=True)


class Progress(Protocol[E]):
    """What `grok run` feeds its events to (`grok sweep`: its members' events)."""

    def handle(self, ev: E) -> None: ...

    def close(self) -> None: ...


class PlainProgress:
    """One line every `every` evaluations; for pipes, nohup and CI."""

    def __init__(self, every: int = 10, stream: IO[str] | None = None) -> None:
        self.every = max(every, 1)
        self.stream = stream or sys.stdout
        self.max_steps = 0
        self.sps = 0.0
        self.pace = Pace()  # the ETA: the mean rate, probes counted (grok_tui/eta.py)
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
            head = f"run {ev.run_dir}"
            rest = f"device {ev.device}  train {ev.n_train}  test {ev.n_test}  steps {ev.step}->{ev.max_steps}"
            # the path is never cut (it is copied into the next command): the rest goes below it when too wide
            wide = len(head) + 2 + len(rest) > columns()
            self._print(f"{head}\n  {rest}" if wide else f"{head}  {rest}")
        elif isinstance(ev, StepsTaken):
            self.sps = ev.steps_per_s
            self.pace.observe(ev.step, ev.wall_s)
        elif isinstance(ev, EvalLogged):
            self.n_evals += 1
            if self.n_evals % self.every == 1 or self.every == 1:
                r = ev.row
                # within 80 columns up to step 10,000,000 of 10,000,000 (train and val accuracy, train loss)
                self._print(
                    f"step {ev.step:>7}/{self.max_steps}  train {r['train_acc']:.3f}  val {r['val_acc']:.3f}  "
                    f"loss {r['train_loss']:.3g}  {self.sps:.0f} steps/s  "
                    f"ETA {format_eta(self.pace.eta_s(ev.step, self.max_steps, self.sps))}"
                )

    def close(self) -> None:
        pass


class RichProgress:
    """A live rich progress line: step, steps/s, train/val accuracy and ETA."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn
        from rich.progress import Progress as Bar

        self.progress = Bar(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[sps]:>6.1f} steps/s"),
            TextColumn("train {task.fields[tr]:.3f}  val {task.fields[va]:.3f}"),
            TextColumn("ETA {task.fields[eta]}"),  # the mean pace, as the lab's and the plain lines' (Pace)
            refresh_per_second=4,
        )
        self.pace = Pace()
        self.task: TaskID | None = None
        self.started: RunStarted | None = None
        self.dead = False

    def handle(self, ev: Event) -> None:
        if self.dead:
            return
        try:
            if isinstance(ev, RunStarted):
                self.started = ev
                self.progress.start()
                self.task = self.progress.add_task(
                    ev.config.preset or "run", total=ev.max_steps, completed=ev.step, sps=0.0, tr=0.0, va=0.0, eta="?"
                )
            elif isinstance(ev, StepsTaken) and self.task is not None and self.started is not None:
                self.pace.observe(ev.step, ev.wall_s)
                eta = format_eta(self.pace.eta_s(ev.step, self.started.max_steps, ev.steps_per_s))
                self.progress.update(self.task, completed=ev.step, sps=ev.steps_per_s, eta=eta)
            elif isinstance(ev, EvalLogged) and self.task is not None:
                self.progress.update(self.task, completed=ev.step, tr=ev.row["train_acc"], va=ev.row["val_acc"])
            elif isinstance(ev, RunFinished) and self.task is not None and self.started is not None:
                stopped = Phases.of(ev.summary.doc()).early_stop_step  # by train.patience, before the budget
                if early_stop_note(stopped, self.started.config.train):  # else the bar freezes short of its total
                    self.progress.update(self.task, description="stopped early")
        except OSError:
            self.dead = True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.progress.stop()


class QuietProgress:
    """No output; for --quiet."""

    def handle(self, ev: Any) -> None:
        pass

    def close(self) -> None:
        pass


def make_progress(quiet: bool, every: int = 10) -> Progress[Event]:
    if quiet:
        return QuietProgress()
    if sys.stdout.isatty():
        return RichProgress()
    return PlainProgress(every)
