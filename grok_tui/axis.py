"""A step axis as the text charts (`grok plot`) and the figures (`grok figure`) both label it: log ticks
at 1, 2, 5·10^k written as 200, 5k, 1M, and the trailing mean `--smooth K` draws."""

from __future__ import annotations

import math


def smooth(values: list[float], k: int) -> list[float]:
    """Trailing mean over k points (k <= 1 leaves the curve as logged)."""
    if k <= 1:
        return values
    out, window = [], []
    for v in values:
        window.append(v)
        if len(window) > k:
            window.pop(0)
        out.append(sum(window) / len(window))
    return out


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks at 1·10^k, or 1, 2, 5·10^k when the range spans less than two decades."""
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for mantissas in ((1,), (1, 3), (1, 2, 5)):
        ticks = [m * 10.0**e for e in decades for m in mantissas if lo <= m * 10.0**e <= hi]
        if len(ticks) >= 3:
            return ticks
    return ticks or [lo, hi]


def tick_label(x: float) -> str:
    """200, 5k, 1.5M: a step count short enough for a tick."""
    if x >= 1e6:
        return f"{x / 1e6:g}M"
    if x >= 1e3:
        return f"{x / 1e3:g}k"
    return f"{x:g}"
