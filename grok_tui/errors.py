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
    try:
        print(f"error: {msg}", file=sys.stderr)
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
