"""Text read from a run directory, made safe to print: no control or format characters."""

from __future__ import annotations

import unicodedata


def clean_text(s: object) -> str:
    """`s` as text without control or format characters (terminal escapes, bidi overrides).

    Every string read from a run directory passes through here before a face prints it: a preset
    name in a shared config.json must not be able to retitle or repaint the user's terminal.
    """
    return "".join(ch for ch in str(s) if unicodedata.category(ch) not in ("Cc", "Cf", "Cs"))


def clean_block(s: object) -> str:
    """`clean_text` for multi-line text (a report, a table): each line cleaned, the newlines kept."""
    return "\n".join(clean_text(line) for line in str(s).split("\n"))
