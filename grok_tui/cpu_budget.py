"""The UI thread's CPU budget while a run trains: a token bucket over its CPU time.

Training and UI share the machine's cores: the naive TUI ran at 0.78x headless (docs/TUI.md). While
a run trains, the UI thread may use at most `share` of one core (measured with time.thread_time(),
so compositing and input count too); charts that would exceed it wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable

UI_SHARE = 0.04
UI_BURST_S = 0.15  # CPU seconds the budget may save up while idle: about two full redraws at 160x48
MAX_STALE_S = 5.0  # charts redraw at least this often, whatever the budget says


class CpuBudget:
    """Token bucket over the UI thread's CPU time: earns share × wall time, spends CPU time."""

    def __init__(self, share: float = UI_SHARE, max_stale_s: float = MAX_STALE_S) -> None:
        self.share = share
        self.max_stale_s = max_stale_s
        self.cpu_clock: Callable[[], float] = time.thread_time  # the UI thread's CPU seconds (tests fake it)
        self._cpu_mark, self._wall_mark = self.cpu_clock(), time.perf_counter()
        self._allowance = UI_BURST_S

    def within(self, live: bool, charts_at: float) -> bool:
        """Whether the charts may redraw now; `charts_at` is the wall time of their last redraw."""
        cpu, wall = self.cpu_clock(), time.perf_counter()
        earned = self.share * (wall - self._wall_mark)
        allowance = self._allowance + earned - (cpu - self._cpu_mark)
        if not live:
            allowance = UI_BURST_S  # nothing trains: nothing to protect
        # debt is capped too, so a one-off cost (mounting, a resize) delays charts by ~4 s at most
        self._allowance = min(max(allowance, -UI_BURST_S), UI_BURST_S)
        self._cpu_mark, self._wall_mark = cpu, wall
        return self._allowance >= 0 or wall - charts_at >= self.max_stale_s
