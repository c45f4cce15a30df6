"""The training loop on a thread of its own, in lockstep with the consumer of its events."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

import torch

LIVENESS_S = 1.0  # seconds between checks that the loop thread is alive while the consumer waits on it
T = TypeVar("T")


def on_loop_thread(loop: Callable[[], Iterator[T]], on_close: Callable[[], None]) -> Generator[T, None, None]:
    """`loop()`'s items, produced on a thread of their own in lockstep with the consumer.

    torch.set_flush_denormal only reaches the OpenMP team of a thread that sets it before its
    first parallel region; the main thread's team exists from `import torch` on, so a loop run
    on the main thread would still pay for subnormals in the memorization plateau. The loop
    thread sets it first, then hands each item over and waits until the consumer asks for the
    next one, so control calls and checkpoints see the trainer exactly as a generator would.
    A consumer that stops early calls `on_close()` (ask the loop to stop) and ends the thread.
    """
    to_consumer: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    to_loop: queue.Queue[str] = queue.Queue(maxsize=1)

    def work() -> None:
        try:
            torch.set_flush_denormal(True)
            for item in loop():
                to_consumer.put(("item", item))
                if to_loop.get() == "close":
                    break
        except BaseException as e:  # noqa: BLE001 - re-raised in the consumer's thread
            to_consumer.put(("error", e))
            return
        to_consumer.put(("done", None))

    thread = threading.Thread(target=work, name="grok-engine-loop", daemon=True)
    thread.start()
    try:
        while True:
            kind, item = _next_from(to_consumer, thread)
            if kind == "done":
                return
            if kind == "error":
                raise item
            yield item
            to_loop.put("next")
    finally:
        if thread.is_alive():
            on_close()
            with contextlib.suppress(queue.Full):
                to_loop.put_nowait("close")
            thread.join(timeout=10)


def _next_from(to_consumer: queue.Queue[tuple[str, Any]], thread: threading.Thread) -> tuple[str, Any]:
    """The loop thread's next message; an error if the thread is gone without one (never a wait forever)."""
    while True:
        try:
            return to_consumer.get(timeout=LIVENESS_S)
        except queue.Empty:
            if not thread.is_alive():
                try:  # it may have posted between the timeout and the check
                    return to_consumer.get_nowait()
                except queue.Empty:
                    raise RuntimeError(f"the training loop's thread ({thread.name}) ended without a result") from None
