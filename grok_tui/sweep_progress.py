"""Progress for `grok sweep`: one rich display on a TTY, plain lines otherwise."""

from __future__ import annotations

import contextlib
import sys
import time
from typing import IO, Any

from engine.events import Status
from engine.records.group_dir import Group
from engine.sweep.events import MemberEnded, MemberProgressed, MemberStarted, SweepEvent
from engine.train.phases import GENERALIZED
from grok_tui.commands.width import wrap
from grok_tui.eta import format_eta
from grok_tui.progress import Progress, QuietProgress


class SweepState:
    """Counts and an ETA from the members' progress: done, running, failed."""

    def __init__(self, group: Group, total: int) -> None:
        self.labels = {m.id: m.label() for m in group.members}
        self.total = total
        self.done = 0
        self.failed = 0
        self.running: dict[str, tuple[int, int]] = {}  # member -> (step, max_steps)
        self.t0 = time.perf_counter()

    def handle(self, ev: SweepEvent) -> None:
        if isinstance(ev, MemberStarted):
            self.running[ev.member] = (0, ev.max_steps)
        elif isinstance(ev, MemberProgressed) and ev.member in self.running:
            self.running[ev.member] = (ev.step, self.running[ev.member][1])
        elif isinstance(ev, MemberEnded):
            self.running.pop(ev.member, None)
            if ev.row.get("status") in (Status.FINISHED, Status.DIVERGED):
                self.done += 1
            else:
                self.failed += 1

    def eta(self) -> str:
        """Elapsed time × work left / work done, counting a running member by its step fraction."""
        frac = self.done + self.failed + sum(s / m for s, m in self.running.values() if m)
        if frac <= 0:
            return "?"
        return format_eta((time.perf_counter() - self.t0) * (self.total - frac) / frac)


def describe(row: dict[str, Any]) -> str:
    st = row.get("status", "?")
    gen = row.get("generalized_step")
    val = row.get("final_val_acc")
    parts = [st]
    if gen not in (None, ""):
        parts.append(f"{GENERALIZED} val at step {gen}")
    if isinstance(val, float) and val == val:
        parts.append(f"val_acc {val:.3f}")
    if row.get("wall_s") not in (None, ""):
        parts.append(f"{float(row['wall_s']):.1f}s")
    if row.get("error"):
        parts.append(str(row["error"]))
    return "  ".join(parts)


class PlainSweepProgress:
    """One line per member that starts or ends; for pipes, nohup and CI."""

    def __init__(self, group: Group, total: int, stream: IO[str] | None = None) -> None:
        self.state = SweepState(group, total)
        self.stream = stream or sys.stdout

    def _print(self, line: str) -> None:
        with contextlib.suppress(OSError):
            print(line, file=self.stream, flush=True)

    def handle(self, ev: SweepEvent) -> None:
        st = self.state
        st.handle(ev)
        if isinstance(ev, MemberStarted):
            self._print(wrap(f"start {ev.member} {st.labels.get(ev.member, '')}  -> {ev.run_dir}"))
        elif isinstance(ev, MemberEnded):
            n = st.done + st.failed
            self._print(
                wrap(
                    f"[{n}/{st.total}] {ev.member} {st.labels.get(ev.member, '')}: {describe(ev.row)}  "
                    f"(running {len(st.running)}, failed {st.failed}, eta {st.eta()})"
                )
            )

    def close(self) -> None:
        pass


class RichSweepProgress:
    """A live bar over members: done, running, failed and ETA, plus the members running now."""

    def __init__(self, group: Group, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.state = SweepState(group, total)
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("running {task.fields[running]}  failed {task.fields[failed]}  eta {task.fields[eta]}"),
            TextColumn("{task.fields[now]}", style="dim"),
            refresh_per_second=4,
        )
        self.progress.start()
        self.task = self.progress.add_task(group.preset or "sweep", total=total, running=0, failed=0, eta="?", now="")

    def handle(self, ev: SweepEvent) -> None:
        st = self.state
        st.handle(ev)
        if isinstance(ev, MemberEnded) and ev.row.get("status") not in (Status.FINISHED, Status.DIVERGED):
            self.progress.console.print(f"{ev.member} {st.labels.get(ev.member, '')}: {describe(ev.row)}")
        now = ", ".join(f"{st.labels.get(m, m)} {s}/{mx}" for m, (s, mx) in list(st.running.items())[:3])
        self.progress.update(
            self.task, completed=st.done + st.failed, running=len(st.running), failed=st.failed, eta=st.eta(), now=now
        )

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.progress.stop()


def make_sweep_progress(group: Group, total: int, quiet: bool) -> Progress[SweepEvent]:
    if quiet:
        return QuietProgress()
    if sys.stdout.isatty():
        return RichSweepProgress(group, total)
    return PlainSweepProgress(group, total)
