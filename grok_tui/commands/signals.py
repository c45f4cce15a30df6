"""Stop signals and exit codes shared by the long-running commands (`grok run`, `grok sweep`)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable
from types import FrameType, TracebackType

STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def say(line: str) -> None:
    """Print a line and flush; a terminal that went away (SIGHUP, closed pipe) is not an error."""
    with contextlib.suppress(OSError):
        print(line, flush=True)


class StopSignals:
    """While entered, SIGINT/SIGTERM/SIGHUP call `on_stop(signum)` instead of killing the process,
    and any later one `on_repeat(signum)` (by default `on_stop` again).

    The caught signals are kept in `caught`; `exit_code()` is 128 + the first one, as a shell
    reports a process ended by that signal (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
    """

    def __init__(self, on_stop: Callable[[int], None], on_repeat: Callable[[int], None] | None = None) -> None:
        self.on_stop = on_stop
        self.on_repeat = on_repeat or on_stop
        self.caught: list[int] = []
        self._old: dict[int, object] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = not self.caught
        self.caught.append(signum)
        if first:
            self.on_stop(signum)
        else:
            self.on_repeat(signum)

    def __enter__(self) -> StopSignals:
        for name in STOP_SIGNALS:
            sig = getattr(signal, name, None)
            if sig is not None:
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for sig, h in self._old.items():
            signal.signal(sig, h)  # type: ignore[arg-type]
        self._old.clear()

    def exit_code(self, default: int = int(signal.SIGINT)) -> int:
        return 128 + int(self.caught[0] if self.caught else default)
