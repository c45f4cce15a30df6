"""One-line user errors with exit code 2, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

EXIT_USAGE = 2
EXIT_DIVERGED = 3


def fail(msg: str, code: int = EXIT_USAGE) -> None:
    """Print `error: msg` on one line and exit; control characters from a crafted file never reach the terminal."""
    from engine.rundir import clean_text

    try:
        print(f"error: {clean_text(' '.join(str(msg).splitlines()))}", file=sys.stderr)
    except OSError:
        pass
    raise SystemExit(code)


def user_errors(fn: F) -> F:
    """Turn ConfigError (bad preset, key, value, file or directory) into `error: ...` and exit 2."""

    @wraps(fn)
    def wrapper(*a: Any, **kw: Any) -> Any:
        from engine.config import ConfigError

        try:
            return fn(*a, **kw)
        except ConfigError as e:
            fail(str(e))

    return wrapper  # type: ignore[return-value]
