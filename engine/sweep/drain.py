"""The one loop that turns a backend's tasks and its members' messages into sweep events.

A backend (the local process pool, Ray) runs tasks of members and carries the members' events back
on one channel, in the order each worker sent them. `drain` yields those events, asks the backend to
stop when the sweep is stopping, and turns a task that died (a worker killed by the OS, a node lost)
into `failed` rows for its members that never reported an end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from engine.records.results import failed_row
from engine.sweep.events import MemberEnded, SweepEvent
from engine.sweep.member import MemberSpec

POLL_S = 0.1  # longest wait for a message before the loop looks at the tasks again
LATE_ROW_S = 30.0  # a task that returned rows its members' MemberEnded has not delivered: wait this long

Outcome = list[dict[str, Any]] | BaseException  # a task's rows, or why it died


class Channel(Protocol):
    """A queue the members' events travel on: multiprocessing's or Ray's."""

    def get(self, block: bool = True, timeout: float | None = None) -> Any: ...

    def get_nowait(self) -> Any: ...


def receive_all(channel: Channel, empty: type[Exception], timeout: float) -> list[SweepEvent]:
    """Every event waiting on `channel`, waiting up to `timeout` for the first; `empty` is its Empty."""
    out: list[SweepEvent] = []
    try:
        out.append(channel.get(timeout=timeout) if timeout > 0 else channel.get_nowait())
        while True:
            out.append(channel.get_nowait())
    except empty:
        return out


class Backend(Protocol):
    """What `drain` needs from a backend."""

    def receive(self, timeout: float) -> list[SweepEvent]:
        """The events members sent since the last call; waits up to `timeout` for the first one."""

    def collect(self) -> list[tuple[Sequence[MemberSpec], Outcome]]:
        """Tasks that ended since the last call, with their members and outcome."""

    def busy(self) -> bool:
        """True while a task has not ended."""

    def request_stop(self) -> None:
        """Ask running members to stop (interrupted, with a checkpoint) and tasks not started to stay so."""

    def close(self) -> None:
        """Wait for the tasks to end and release the workers."""


def drain(backend: Backend, stopping: Callable[[], bool]) -> Iterator[SweepEvent]:
    """Yield every member's events until all tasks ended; each member ends exactly once.

    The rows come from the members' own `MemberEnded` messages, so a worker's end of one member is
    yielded before its start of the next. A task's returned rows are only a fallback, used when the
    message has not arrived `LATE_ROW_S` after the task ended; a dead task's members fail.
    """
    ledger = _Ledger()
    asked = False
    while True:
        if stopping() and not asked:
            asked = True
            backend.request_stop()
        yield from ledger.deliver(backend.receive(POLL_S))
        done = backend.collect()
        if done:
            yield from ledger.deliver(backend.receive(0))  # what the tasks sent before they returned
        now = time.monotonic()
        for specs, outcome in done:
            yield from ledger.task_ended(specs, outcome, now)
        yield from ledger.overdue(now)
        if not backend.busy() and not ledger.owed:
            return


class _Ledger:
    """Which members have ended, and the rows owed by tasks that returned before their members' messages came."""

    def __init__(self) -> None:
        self.ended: set[str] = set()
        self.owed: dict[str, tuple[float, dict[str, Any]]] = {}  # member -> (deadline, row from its task's return)

    def deliver(self, events: list[SweepEvent]) -> Iterator[SweepEvent]:
        for ev in events:
            if ev.member in self.ended:
                continue  # a fallback row was used already; its late messages say nothing new
            if isinstance(ev, MemberEnded):
                self.ended.add(ev.member)
                self.owed.pop(ev.member, None)
            yield ev

    def task_ended(self, specs: Sequence[MemberSpec], outcome: Outcome, now: float) -> Iterator[SweepEvent]:
        """A dead task's members that never reported an end fail now; a returned task's rows are owed."""
        if isinstance(outcome, BaseException):
            for s in specs:
                if s.id not in self.ended:
                    self.ended.add(s.id)
                    yield MemberEnded(s.id, failed_row(s.id, repr(outcome)))
            return
        for row in outcome:
            if row["member"] not in self.ended:
                self.owed[row["member"]] = (now + LATE_ROW_S, row)

    def overdue(self, now: float) -> Iterator[SweepEvent]:
        """The owed rows whose member's own message did not come within LATE_ROW_S."""
        for member, (deadline, row) in list(self.owed.items()):
            if now > deadline:
                del self.owed[member]
                self.ended.add(member)
                yield MemberEnded(member, row)
