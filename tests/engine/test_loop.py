"""engine/train/loop_thread.py's hand-off between the loop thread and its consumer: items in order, errors raised in
the consumer, and never a wait on a thread that is gone."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

import pytest
import torch

import engine.train.loop_thread as loop_mod
from engine.train.loop_thread import _next_from, on_loop_thread


def _loop_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "grok-engine-loop"}


def test_items_arrive_in_order_on_the_loop_thread() -> None:
    seen: list[str] = []

    def loop() -> Iterator[int]:
        for i in range(5):
            seen.append(threading.current_thread().name)
            yield i

    assert list(on_loop_thread(loop, lambda: None)) == [0, 1, 2, 3, 4]
    assert set(seen) == {"grok-engine-loop"}


def test_an_error_in_the_loop_is_raised_in_the_consumer() -> None:
    def loop() -> Iterator[int]:
        yield 1
        raise ValueError("boom")

    items = on_loop_thread(loop, lambda: None)
    assert next(items) == 1
    with pytest.raises(ValueError, match="boom"):
        next(items)


def test_an_error_before_the_first_item_is_raised_not_waited_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_: bool) -> bool:
        raise RuntimeError("no denormal control here")

    monkeypatch.setattr(torch, "set_flush_denormal", refuse)
    with pytest.raises(RuntimeError, match="no denormal control"):
        list(on_loop_thread(lambda: iter([1, 2]), lambda: None))


def test_a_consumer_that_stops_early_asks_the_loop_to_stop_and_ends_its_thread() -> None:
    closed = threading.Event()

    def loop() -> Iterator[int]:
        i = 0
        while not closed.is_set():
            yield i
            i += 1

    before = _loop_threads()
    gen = on_loop_thread(loop, closed.set)
    assert next(gen) == 0
    assert len(_loop_threads() - before) == 1
    gen.close()
    assert closed.is_set()
    assert not _loop_threads() - before  # this generator's thread was joined, not left running


def test_a_thread_gone_without_a_message_is_an_error_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop_mod, "LIVENESS_S", 0.01)
    q: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=1)
    dead = threading.Thread(target=lambda: None, name="grok-engine-loop")
    dead.start()
    dead.join()
    with pytest.raises(RuntimeError, match="ended without a result"):
        _next_from(q, dead)


def test_a_message_posted_just_before_the_thread_ended_is_still_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop_mod, "LIVENESS_S", 0.01)
    q: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=1)
    poster = threading.Thread(target=lambda: q.put(("done", None)))
    poster.start()
    poster.join()
    assert _next_from(q, poster) == ("done", None)
