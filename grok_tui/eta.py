"""The one ETA format of the CLI and the TUI: `4m05s` under an hour, `2h07m` from an hour on."""

from __future__ import annotations

import math


def format_eta(seconds: float, unknown: str = "?") -> str:
    """Seconds left as `MmSSs` or `HhMMm`; `unknown` when there is no estimate (inf, nan, < 0)."""
    if not math.isfinite(seconds) or seconds < 0:
        return unknown
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"
