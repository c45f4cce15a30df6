"""The `grok` command line. Commands import torch only when they train, so --help stays fast."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Annotated, Any, NoReturn

import typer

from grok_tui.errors import one_line_usage_errors

app = typer.Typer(
    name="grok",
    help="A terminal lab for grokking: train, watch, sweep and export modular-arithmetic runs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
# One module per command under grok_tui/commands, in the order `grok --help` lists them.
COMMANDS: tuple[str, ...] = ("run", "fork", "tui", "sweep", "ls", "show", "plot", "report", "figure", "export")
COMMANDS += ("presets", "split", "tokens", "circuit", "bench", "doctor")
for name in COMMANDS:  # each module's command is a module-level function on its own Typer, merged into this one
    app.add_typer(importlib.import_module(f"grok_tui.commands.{name}").app)


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("grok-tui")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"grok-tui {version()}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True)
    ] = False,
) -> None:
    """A terminal lab for grokking: train, watch, sweep and export modular-arithmetic runs."""


def main() -> None:
    try:
        quiet_on_closed_pipe(lambda: one_line_usage_errors(app))
    except SystemExit as e:
        exit_without_teardown(e.code)


def exit_without_teardown(code: int | str | None) -> NoReturn:
    """Exit as SystemExit(code) would, but once torch is loaded skip the interpreter's teardown.

    Tearing down a process that imported torch costs about 0.5 CPU-seconds on the 2-core CPU (`python
    -c "import torch"` against the same ending in `os._exit(0)`: 1.5 against 1.0 CPU-seconds,
    docs/PERFORMANCE.md), a fifth of a `grok run --steps 1`, and does nothing a finished command needs:
    the atexit handlers still run (logging, multiprocessing, temporary files) and both streams are
    flushed. Where another non-daemon thread is alive, the ordinary exit waits for it as Python does.
    """
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if "torch" not in sys.modules or others:
        raise SystemExit(code)
    if code is not None and not isinstance(code, int):  # SystemExit("message") prints it and exits 1
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        # a reader that went away (quiet_on_closed_pipe), a closed stream
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code or 0)


def quiet_on_closed_pipe(command: Callable[[], Any]) -> NoReturn:
    """Run the command line; a reader that stopped early (`grok ls --json | head -1`) is not an error.

    As with `git log | head`, nothing is printed and the exit is 0. The EPIPE of a write is caught
    in three places, each of which leaves a sign: typer (a write inside a command) swaps sys.stdout
    for click's PacifyFlushWrapper and exits 1; rich (typer's help) points stdout at /dev/null and
    exits 1; a write still buffered when the command returns fails in the flush here.
    """
    code: int | str | None = 0
    was_null = _is_devnull(sys.stdout)
    closed = False
    try:
        command()
    except SystemExit as e:
        code = e.code
    except BrokenPipeError:
        closed = True
    closed = closed or type(sys.stdout).__name__ == "PacifyFlushWrapper"  # click's, or typer's copy of click
    closed = closed or (_is_devnull(sys.stdout) and not was_null)
    if not closed:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            closed = True
    if closed:
        devnull = os.open(os.devnull, os.O_WRONLY)  # the interpreter's last flush goes nowhere, quietly
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        code = 0 if code in (0, 1, None) else code  # 1 is typer's and rich's code for the broken pipe
    raise SystemExit(code)


def _is_devnull(stream: Any) -> bool:
    try:
        return os.path.samestat(os.fstat(stream.fileno()), os.stat(os.devnull))
    except (OSError, ValueError, AttributeError):
        return False


def tui_main() -> None:
    """Entry point of `grok-tui`: the same as `grok tui`."""
    from grok_tui.commands import tui

    quiet_on_closed_pipe(tui.standalone)  # `grok-tui --help | head`: no error, as for `grok`
