"""The status bar: preset, device, step, steps/s, ETA, phase markers and the run directory; for a flagship
preset, a third line saying what it shows and which preset to try next."""

from __future__ import annotations

import math

from rich.text import Text

from engine.events import Status
from grok_tui.charts.canvas import run_name
from grok_tui.charts.lines import Lines
from grok_tui.eta import format_eta
from grok_tui.guide import guide
from grok_tui.rundata import RunData, clean_text
from grok_tui.widgets.drawn import Drawn

STATUS_STYLE: dict[str, str] = {  # every Status (engine/events.py) has its style
    Status.STARTING: "dim",
    Status.RUNNING: "bold green",
    Status.PAUSED: "bold yellow",
    Status.FINISHED: "bold cyan",
    Status.INTERRUPTED: "bold magenta",
    Status.DIVERGED: "bold red",
    Status.FAILED: "bold red",
    Status.PREPARED: "bold magenta",  # a fork written and not started
    Status.IDLE: "dim",
    Status.DEAD: "bold red",  # its writer died without closing it (engine/records/run.py read_run)
}


def _step(v: int | None) -> str:
    return "—" if v is None else f"{v:,}"


def status_text(d: RunData, width: int = 0) -> Text:
    """Two lines; what matters most comes first, so a 60-column terminal keeps status, step, val, ETA. In
    `width` columns (0: any) the run directory is cut from the middle, so its end (seed, -forkN) stays."""
    with d.lock:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f" {d.status.upper()} ", style="reverse " + STATUS_STYLE.get(d.status, ""))
        if d.status == Status.IDLE:
            t.append("  no run: press n to start one  ·  ? help  ·  q quit", style="bold")
            return t
        if d.status != Status.STARTING:  # before RunStarted the step budget is not known yet
            t.append(f" step {d.step:,}/{d.max_steps:,}")
        va = d.latest("val_acc")
        if math.isfinite(va):
            t.append(f"  val {va:.3f}", style="bold")
        if d.live:
            t.append(f"  ETA {format_eta(d.eta_s(), unknown='—')}")
        sps = f"{d.steps_per_s:,.0f}" if d.steps_per_s else "—"
        t.append(f"  {clean_text(d.preset)}", style="bold")
        t.append(f"  {d.device or '?'}  {sps} steps/s")
        t.append("\n")
        ph = d.phases
        t.append(f" memorized {_step(ph.memorized_step)}")
        if d.columns and not d.probe_off("progress"):  # the Circuit view's C and U (engine/train/phases.py)
            t.append(f" · C {_step(ph.circuit_step)} · U {_step(ph.cleanup_step)}")
        t.append(f" · generalized {_step(ph.generalized_step)}")
        t.append(f" · delay {_step(ph.delay)}", style="bold")
        if d.error:
            t.append(f"  {d.status}: {clean_text(d.error)}", style="bold red")
        else:
            tr = d.latest("train_acc")
            if math.isfinite(tr):
                t.append(f"  train {tr:.3f}")
            if d.run_dir:
                room = width - (len(t.plain) - t.plain.rfind("\n") - 1) - 2 if width else 0
                path = clean_text(d.run_dir)
                t.append(f"  {run_name(path, room) if room >= 12 else path}", style="dim")
        line = "" if d.fork_changes else guide(d.preset, len(d.tokens.rare) if d.config is not None else None)
        if line:  # a flagship preset's prediction and what to try next (grok_tui/guide.py); a changed fork has none
            t.append("\n")
            t.append(f" {line}", style="italic")
        return t


class StatusBar(Drawn):
    """Two lines at the top of the main screen; redrawn by the app timer only when text changes."""

    DEFAULT_CSS = "StatusBar { height: 2; }"

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self._text = Text()

    @property
    def plain(self) -> str:
        return self._text.plain

    def show(self, data: RunData) -> None:
        text = status_text(data, self.size.width)
        if text.plain != self._text.plain:
            self._text = text
            self.styles.height = text.plain.count("\n") + 1  # 3 with a first-launch guide line
            self.repaint()

    def lines(self, width: int, height: int, mono: bool) -> Lines:
        drawn = Lines()
        for i, line in enumerate(self._text.split("\n")):
            line.truncate(width, overflow="ellipsis")
            if i:
                drawn.append("\n")
            drawn.append_text(line)
        return drawn
