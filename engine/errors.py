"""The lab's user-facing error: one line naming the field, file or option at fault (exit code 2 in the CLI)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A user-facing configuration error; its message is one line naming the field."""
