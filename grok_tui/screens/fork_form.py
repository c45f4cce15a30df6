"""The `f` form: fork the run on screen at a kept step, with settings and interventions (docs/FORK.md).

The engine does the work and the checks (engine/train/fork.py): a bad key, a step with no checkpoint or an
intervention that does not parse is shown inline and the form stays open; a good one writes the fork's
run directory and the app trains it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from engine.rundir.dirs import clean_text


@dataclass(frozen=True)
class ForkRequest:
    """What the form asks for: the step (None: the latest checkpoint), `--set` items and `--intervene` specs."""

    step: int | None
    sets: dict[str, str]
    interventions: list[str]
    steps: int | None


def snap(kept: list[int], step: float | None) -> int | None:
    """The latest kept step at or before `step` (None: the latest of all; None when there is none)."""
    if not kept:
        return None
    if step is None:
        return max(kept)
    below = [k for k in kept if k <= step]
    return max(below) if below else min(kept)


class ForkForm(ModalScreen[Path | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel"), Binding("ctrl+s", "fork", "fork")]
    DEFAULT_CSS = """
    ForkForm { align: center middle; }
    ForkForm #fork-box { width: 90; height: auto; border: round $accent; padding: 0 1; background: $surface; }
    ForkForm .row { height: 1; }
    ForkForm .row Label { width: 15; }
    ForkForm Input { height: 1; border: none; padding: 0 1; width: 1fr; }
    ForkForm Input:focus { border: none; text-style: underline; background: $boost; }
    ForkForm #fork-kept { height: auto; color: $text-muted; }
    ForkForm #fork-error { height: auto; color: $error; text-style: bold; }
    ForkForm #fork-buttons { height: 1; margin-top: 1; }
    ForkForm Button { margin-right: 2; }
    """

    def __init__(
        self, run_dir: Path, step: int | None, kept: list[int], fork: Callable[[ForkRequest], Path], live: bool = False
    ) -> None:
        super().__init__()
        self.run_dir, self.step, self.kept, self.fork, self.live = run_dir, step, kept, fork, live

    def compose(self) -> ComposeResult:
        with Vertical(id="fork-box"):
            yield Label(clean_text(f"Fork {self.run_dir.name}: settings and interventions from the fork step on"))
            shown = ", ".join(map(str, self.kept[-10:])) or "none (latest checkpoint only)"
            yield Static(f"kept steps: {shown}", id="fork-kept")
            for key, label, value, hint in (
                ("step", "at step", "" if self.step is None else str(self.step), self._now),
                ("sets", "settings", "", "optim.lr_ratio=10 train.sampler=balanced"),
                ("intervene", "interventions", "", "rescale:targets=ring only:E[targets]"),
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
        return "empty: now (the run stops and checkpoints)" if self.live else "a kept step; empty: the latest"

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

        error = self.query_one("#fork-error", Static)
        try:
            path = self.fork(self.request())
        except ConfigError as e:
            error.update(clean_text(f"error: {e}"))
            return
        self.dismiss(path)

    @on(Button.Pressed, "#fork-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
