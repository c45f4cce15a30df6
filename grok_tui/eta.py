"""The one ETA of the CLI and the TUI: its pace, and its format (`4m05s` under an hour, `2h07m` from an hour on)."""

from __future__ import annotations

import math


def format_eta(seconds: float, unknown: str = "?") -> str:
    """Seconds left as `MmSSs` or `HhMMm`; `unknown` when there is no estimate (inf, nan, < 0)."""
    if not math.isfinite(seconds) or seconds < 0:
        return unknown
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


class Pace:
    """Steps per second for the ETA: the mean rate since the first progress event seen, in the run's own wall
    time. The engine's `steps_per_s` is the rate since its last report, which drops in a window where a
    probe ran and recovers in the next, so an ETA from it swings (1m02s -> 1m56s on the flagship); the mean
    counts the probes' time at the share of steps they take."""

    def __init__(self) -> None:
        self.first: tuple[int, float] | None = None  # (step, wall_s) of the first report
        self.rate = math.nan

    def observe(self, step: int, wall_s: float) -> None:
        if self.first is None:
            self.first = (step, wall_s)
            return
        steps, secs = step - self.first[0], wall_s - self.first[1]
        if steps > 0 and secs > 0:
            self.rate = steps / secs

    def eta_s(self, step: int, max_steps: int, fallback: float = math.nan) -> float:
        """Seconds to `max_steps` at the mean rate; at `fallback` steps/s before there is one."""
        rate = self.rate if math.isfinite(self.rate) else fallback
        return (max_steps - step) / rate if rate > 0 else math.nan
