"""One-line user errors with exit code 2, never a traceback."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, NoReturn, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

EXIT_USAGE = 2
EXIT_DIVERGED = 3


def fail(msg: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print `error: msg` and exit: one message, folded to the terminal's width (the continuation lines
    indented, a path longer than a line broken, nothing cut); control characters from a crafted file never
    reach the terminal."""
    from engine.rundir import clean_text

    with contextlib.suppress(OSError):
        print(error_text(f"error: {clean_text(' '.join(str(msg).splitlines()))}"), file=sys.stderr)
    raise SystemExit(code)


def error_text(line: str, width: int | None = None) -> str:
    """An error line folded at spaces to `width` (the terminal's: grok_tui/commands/width.py), continuation
    lines indented by two spaces; a word longer than a line (a path) is broken, never cut."""
    import textwrap

    from grok_tui.commands.width import columns

    width = width or columns()
    if len(line) <= width:
        return line
    return "\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False))


def user_errors(fn: F) -> F:
    """Turn ConfigError (bad preset, key, value, file or directory) into `error: ...` and exit 2."""

    @wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        from engine.config import ConfigError

        try:
            return fn(*a, **kw)
        except ConfigError as e:
            fail(_missing(str(e)))

    return wrapper  # type: ignore[return-value]


def _missing(msg: str) -> str:
    """`PATH: not a run directory ...` for a PATH that does not exist says so, as `grok ls` does."""
    from pathlib import Path

    path, sep, rest = msg.partition(": ")
    if sep and rest.startswith("not a ") and path and not Path(path).exists():
        return f"{path}: no such directory"
    return msg


def one_line_usage_errors(command: Callable[..., Any]) -> NoReturn:
    """Run a typer app (`command(standalone_mode=False)`) so that click's usage errors (a missing
    argument, `--seed x`, an unknown option or command) print one `error: ...` line and exit 2, as every
    other bad input does, instead of typer's boxed panel. `grok` alone still prints its help."""
    import typer

    try:
        rv = command(standalone_mode=False)
    except typer.TyperException as e:  # click's exceptions (typer vendors click; this is their public base)
        if type(e).__name__ == "NoArgsIsHelpError":  # `grok` with no command: the help, as before
            e.show()  # type: ignore[attr-defined]
            raise SystemExit(EXIT_USAGE) from None
        message = e.format_message() if hasattr(e, "format_message") else str(e)
        ctx = getattr(e, "ctx", None)
        where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        fail(f"{_lower_first(message)}{where}", getattr(e, "exit_code", EXIT_USAGE))
    except typer.Abort:
        fail("aborted", 1)
    raise SystemExit(rv if isinstance(rv, int) else 0)


def _lower_first(msg: str) -> str:
    msg = msg.rstrip(".")
    return msg[:1].lower() + msg[1:]
