"""The `f` form: fork the run on screen at a kept step, with settings and interventions (docs/FORK.md).

The engine does the work and the checks (engine/train/fork.py): a bad key, a step with no checkpoint or an
intervention that does not parse is shown inline, whole, and the form stays open; a good one writes the
fork's run directory and the app trains it. The fork itself (stopping a live parent, the checkpoint's I/O,
loading the fork) runs in a thread worker: the screen keeps drawing meanwhile. The form fits 80 columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from engine.config import RunConfig
from engine.rundir import clean_text
from grok_tui.runner import RunFactory


@dataclass(frozen=True)
class ForkRequest:
    """What the form asks for: the step (None: the latest checkpoint), `--set` items and `--intervene` specs."""

    step: int | None
    sets: dict[str, str]
    interventions: list[str]
    steps: int | None


@dataclass(frozen=True)
class Forked:
    """A fork written and ready to train: its directory, its config and the factory that resumes it."""

    path: Path
    cfg: RunConfig
    factory: RunFactory


def snap(kept: list[int], step: float | None) -> int | None:
    """The latest kept step at or before `step` (None: the latest of all; None when there is none)."""
    if not kept:
        return None
    if step is None:
        return max(kept)
    below = [k for k in kept if k <= step]
    return max(below) if below else min(kept)


class ForkForm(ModalScreen[Forked | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel"), Binding("ctrl+s", "fork", "fork")]
    DEFAULT_CSS = """
    ForkForm { align: center middle; }
    ForkForm #fork-box {
        width: 100%; max-width: 90; height: auto; max-height: 100%;
        border: round $accent; padding: 0 1; background: $surface;
    }
    ForkForm .row { height: 1; }
    ForkForm .row Label { width: 14; }
    ForkForm Input { height: 1; border: none; padding: 0 1; width: 1fr; background: $boost; }
    ForkForm Input:focus { border: none; text-style: underline; }
    ForkForm Input > .input--placeholder { color: $text-disabled; text-style: italic; }
    ForkForm #fork-kept { height: auto; color: $text-muted; }
    ForkForm #fork-error { height: auto; width: 100%; color: $error; text-style: bold; }
    ForkForm #fork-buttons { height: 1; margin-top: 1; }
    ForkForm Button { margin-right: 2; }
    """

    def __init__(
        self,
        run_dir: Path,
        step: int | None,
        kept: list[int],
        fork: Callable[[ForkRequest], Forked],
        live: bool = False,
    ) -> None:
        super().__init__()
        self.run_dir, self.step, self.kept, self.fork, self.live = run_dir, step, kept, fork, live
        self.busy = False  # a fork is being written: the form waits for it

    def compose(self) -> ComposeResult:
        with Vertical(id="fork-box"):
            yield Static(clean_text(f"Fork {self.run_dir.name}: settings and interventions from the fork step on"))
            shown = ", ".join(map(str, self.kept[-10:])) or "none (latest checkpoint only)"
            yield Static(f"kept steps: {shown}", id="fork-kept")
            for key, label, value, hint in (
                ("step", "at step", "" if self.step is None else str(self.step), self._now),
                ("sets", "settings", "", "e.g. optim.lr_ratio=10 train.sampler=balanced"),
                ("intervene", "interventions", "", "e.g. rescale:rare=ring only:E[rare]"),
                ("steps", "train to step", "", "empty: the run's max_steps"),
            ):
                with Horizontal(classes="row"):
                    yield Label(label)
                    yield Input(value=value, placeholder=hint, id=f"fork-{key}")
            yield Static("", id="fork-error")
            with Horizontal(id="fork-buttons"):
                yield Button("Fork", id="fork-go", variant="primary", compact=True)
                yield Button("Cancel", id="fork-cancel", compact=True)

    @property
    def _now(self) -> str:
        return "empty: now (the run stops and checkpoints)" if self.live else "a kept step; empty: latest"

    def on_mount(self) -> None:
        self.query_one("#fork-sets", Input).focus()

    def request(self) -> ForkRequest:
        """The fields as a request; ConfigError, one line, for a step or setting that does not parse."""
        from engine.config import ConfigError, parse_set

        def value(key: str) -> str:
            return self.query_one(f"#fork-{key}", Input).value.strip()

        def whole(key: str, name: str) -> int | None:
            v = value(key)
            if not v:
                return None
            if not v.isdigit():
                raise ConfigError(f"{name}: expected a step (got {v!r})")
            return int(v)

        sets = parse_set(value("sets").split())
        return ForkRequest(whole("step", "at step"), sets, value("intervene").split(), whole("steps", "train to step"))

    @on(Input.Submitted)
    @on(Button.Pressed, "#fork-go")
    def action_fork(self) -> None:
        from engine.config import ConfigError

        if self.busy:
            return
        error = self.query_one("#fork-error", Static)
        try:
            req = self.request()
        except ConfigError as e:
            error.update(clean_text(f"error: {e}"))
            return
        self.busy = True
        self.query_one("#fork-go", Button).disabled = True
        error.update("forking…")
        self._write_fork(req)

    @work(thread=True, exclusive=True, exit_on_error=False, group="fork")
    def _write_fork(self, req: ForkRequest) -> None:
        """The fork off the event loop: the live parent's stop, the checkpoint's I/O, the fork's loading."""
        from engine.config import ConfigError

        try:
            forked = self.fork(req)
        except ConfigError as e:
            self.app.call_from_thread(self._failed, f"error: {e}")
        except Exception as e:  # noqa: BLE001 - the form stays open and says what happened
            self.app.call_from_thread(self._failed, f"error: {type(e).__name__}: {e}")
        else:
            self.app.call_from_thread(self.dismiss, forked)

    def _failed(self, text: str) -> None:
        self.busy = False
        self.query_one("#fork-go", Button).disabled = False
        self.query_one("#fork-error", Static).update(clean_text(text))

    @on(Button.Pressed, "#fork-cancel")
    def action_cancel(self) -> None:
        if self.busy:  # the fork is being written: it finishes, then the app trains it
            self.notify("forking: wait for it to finish", severity="warning")
            return
        self.dismiss(None)
