"""How the app ends on a stop signal: as `q` does, with the run closed interrupted and checkpointed.

SIGINT and SIGTERM quit on the event loop. SIGHUP means the terminal is gone (a dropped SSH
connection, a closed tmux): nothing can be drawn any more, and Textual's shutdown would block writing
to the dead terminal (its writer thread dies on EIO and its queue fills), so that handler closes the
run synchronously and leaves with os._exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

from grok_tui.commands import signals

STOP_SIGNALS = tuple(getattr(signal, name) for name in signals.STOP_SIGNALS if hasattr(signal, name))
HANGUP_WAIT_S = 60.0  # after SIGHUP, the engine gets this long to checkpoint (a Hessian probe may be running)


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


def on_hangup(app: Any, loop: asyncio.AbstractEventLoop, sig: int) -> None:
    """SIGHUP: stop the engine, wait until it has logged its last row, checkpointed and written
    summary.json (engine/run.py), and leave with 128 + SIGHUP."""
    app.stop_signal = sig
    if app.engine is not None and app.data.live:
        app.engine.stop("interrupted")
    if app.engine_done is not None:
        app.engine_done.wait(HANGUP_WAIT_S)
    os._exit(128 + sig)
