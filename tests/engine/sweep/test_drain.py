"""The drain loop shared by the pool and Ray backends, fed by a scripted backend: order, ends, stops, dead tasks."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from engine.sweep import drain as drain_mod
from engine.sweep.drain import Outcome, drain
from engine.sweep.events import MemberEnded, MemberProgressed, MemberStarted, SweepEvent
from engine.sweep.member import MemberSpec
from tests.conftest import tiny_config

CFG = tiny_config()


def spec(mid: str) -> MemberSpec:
    return MemberSpec(mid, CFG, f"/nowhere/{mid}")


def row(mid: str, status: str = "finished") -> dict[str, str]:
    return {"member": mid, "status": status}


class Scripted:
    """Each loop turn delivers the next tick: (messages, tasks that ended)."""

    def __init__(self, ticks: list[tuple[list[SweepEvent], list[tuple[Sequence[MemberSpec], Outcome]]]]) -> None:
        self.ticks = ticks
        self.turn = -1
        self.stops = 0
        self.closed = False

    def receive(self, timeout: float) -> list[SweepEvent]:
        if timeout == 0:
            return []  # everything a tick holds arrives on its first receive
        self.turn += 1
        return self.ticks[self.turn][0] if self.turn < len(self.ticks) else []

    def collect(self) -> list[tuple[Sequence[MemberSpec], Outcome]]:
        return self.ticks[self.turn][1] if self.turn < len(self.ticks) else []

    def busy(self) -> bool:
        return self.turn < len(self.ticks) - 1

    def request_stop(self) -> None:
        self.stops += 1

    def close(self) -> None:
        self.closed = True


def test_each_workers_end_comes_before_its_next_start_and_each_member_ends_once() -> None:
    a, b, c = spec("m000"), spec("m001"), spec("m002")
    backend = Scripted(
        [
            ([MemberStarted("m000", "d0", 10), MemberStarted("m001", "d1", 10)], []),
            # m000's task returned before its own MemberEnded crossed: the row waits for the message
            ([MemberProgressed("m000", 5)], [([a], [row("m000")])]),
            ([MemberEnded("m000", row("m000")), MemberStarted("m002", "d2", 10)], []),
            ([MemberEnded("m001", row("m001")), MemberProgressed("m001", 10)], [([b], [row("m001")])]),
            ([MemberEnded("m002", row("m002"))], [([c], [row("m002")])]),
        ]
    )
    evs = list(drain(backend, lambda: False))
    running: set[str] = set()
    most = 0
    for ev in evs:
        if isinstance(ev, MemberStarted):
            running.add(ev.member)
        elif isinstance(ev, MemberEnded):
            running.remove(ev.member)
        most = max(most, len(running))
    assert most == 2  # two workers: never `running 3`
    assert [e.member for e in evs if isinstance(e, MemberEnded)] == ["m000", "m001", "m002"]
    assert not any(isinstance(e, MemberProgressed) and e.step == 10 for e in evs)  # after its end: dropped
    assert backend.stops == 0


def test_a_returned_row_whose_message_never_comes_is_used_after_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drain_mod, "LATE_ROW_S", 0.0)
    backend = Scripted([([MemberStarted("m000", "d0", 10)], [([spec("m000")], [row("m000")])])])
    evs = list(drain(backend, lambda: False))
    assert evs == [MemberStarted("m000", "d0", 10), MemberEnded("m000", row("m000"))]


def test_a_dead_task_fails_the_members_that_did_not_end() -> None:
    a, b = spec("m000"), spec("m001")
    backend = Scripted(
        [
            ([MemberStarted("m000", "d0", 10)], []),
            ([MemberEnded("m000", row("m000"))], []),
            ([], [([a, b], RuntimeError("worker killed by signal 9"))]),
        ]
    )
    ends = [e for e in drain(backend, lambda: False) if isinstance(e, MemberEnded)]
    assert [(e.member, e.row["status"]) for e in ends] == [("m000", "finished"), ("m001", "failed")]
    assert "worker killed" in ends[1].row["error"]


def test_stopping_asks_the_backend_once() -> None:
    backend = Scripted([([], []), ([], []), ([], [])])
    assert list(drain(backend, lambda: backend.turn >= 0)) == []
    assert backend.stops == 1
