"""How the app ends on a stop signal: as `q` does, with the run closed interrupted and checkpointed.

SIGINT, SIGTERM and a SIGHUP sent while the terminal is still there (`kill -HUP`) quit on the event
loop, so Textual restores the terminal on the way out: it leaves the alternate screen, shows the
cursor and puts back the terminal's modes (echo, line editing). A hangup whose terminal is gone (a
dropped SSH connection, a closed tmux) is different: nothing can be drawn any more, and Textual's
shutdown would block writing to the dead terminal (its writer thread dies on EIO and its queue
fills), so that handler closes the run synchronously and leaves with os._exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import sys
import threading
from typing import Any

from engine.events import Status
from engine.train.run import RunHandle
from grok_tui.commands import signals

STOP_SIGNALS = tuple(getattr(signal, name) for name in signals.STOP_SIGNALS if hasattr(signal, name))
HANGUP_WAIT_S = 60.0  # after SIGHUP, the engine gets this long to checkpoint (a Hessian probe may be running)
EXIT_WAIT_S = 30.0  # then Textual gets this long to restore a live terminal before the process leaves anyway


def install(app: Any) -> None:
    """Route the stop signals to the app (grok_tui/app.py's GrokApp); call on the event loop (on_mount)."""
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            if sig == getattr(signal, "SIGHUP", None):
                # a plain handler, not the loop's: it must run even while the loop is stuck writing
                signal.signal(sig, lambda s, frame: on_hangup(app, loop, s))
            else:
                loop.add_signal_handler(sig, quit_on_signal, app, sig)


def quit_on_signal(app: Any, sig: int) -> None:
    """Quit as `q` does (on the event loop, so the engine is stopped cleanly and the terminal restored)."""
    app.stop_signal = app.stop_signal or sig
    app.run_worker(app.action_quit(), group="quit")


def terminal_alive(fd: int) -> bool:
    """Whether the terminal behind `fd` still takes output: a hung-up tty polls as POLLHUP or POLLERR."""
    try:
        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        events = poll.poll(0)
    except (OSError, ValueError):
        return False
    return not any(ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, ev in events)


def _terminal_fd() -> int:
    return (sys.__stderr__ or sys.stderr).fileno()  # where Textual's Linux driver writes


def on_hangup(app: Any, loop: asyncio.AbstractEventLoop, sig: int) -> None:
    """SIGHUP: with the terminal still there, quit on the loop and force the exit only after a
    deadline; with it gone, stop the engine, wait until it has logged its last row, checkpointed and
    written summary.json (engine/train/run.py), and leave with 128 + SIGHUP."""
    app.stop_signal = sig
    if terminal_alive(_terminal_fd()):
        loop.call_soon_threadsafe(quit_on_signal, app, sig)
        threading.Thread(target=_exit_after_deadline, args=(app, sig), daemon=True, name="hangup-deadline").start()
        return
    _stop_engine(app)
    os._exit(128 + sig)


def _stop_engine(app: Any) -> None:
    engine: RunHandle | None = app.engine
    if engine is not None and app.data.live:
        engine.stop(Status.INTERRUPTED)
    if app.engine_done is not None:
        app.engine_done.wait(HANGUP_WAIT_S)


def _exit_after_deadline(app: Any, sig: int) -> None:
    """Should the clean exit hang (the terminal went away after all), the process still ends."""
    _stop_engine(app)
    threading.Event().wait(EXIT_WAIT_S)
    os._exit(128 + sig)
