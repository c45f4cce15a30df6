"""The step axis's zoom and the time scrubber: which steps a key press shows next."""

from __future__ import annotations

import bisect
import math
from typing import Any

from grok_tui.charts.series import axis_frac
from grok_tui.charts.views import Axis


def zoom_in(axis: Axis, x_max: float, step: int) -> tuple[tuple[float, float], float | None] | None:
    """The next (window, cursor) of `z`, or None when nothing changes.

    With a cursor, the visible span is halved around it (in log space on a log axis) and the cursor
    stays on its step; without one, the window fits the steps run so far (`step`).
    """
    lo, hi = axis.bounds(x_max)
    if axis.cursor is None:
        fit = (0.0, float(max(step, 10)))
        return None if (lo, hi) == fit else (fit, None)
    c = axis.cursor_step(x_max) or 0.0
    if axis.log:  # halve the span in log space, around the cursor
        l0, l1, lc = math.log10(lo + 1), math.log10(hi + 1), math.log10(c + 1)
        half = (l1 - l0) / 4
        new = (10 ** max(lc - half, 0.0) - 1, 10 ** (lc + half) - 1)
    else:
        half = (hi - lo) / 4
        new = (max(c - half, 0.0), c + half)
    new = (round_down(max(new[0], 0.0)), min(round_up(max(new[1], new[0] + 2.0)), x_max))
    return new, axis_frac(c, new[1], axis.log, new[0])


def round_down(v: float, digits: int = 2, to: Any = math.floor) -> float:
    """`v` down to `digits` significant figures (2,511 -> 2,500; 24.1 -> 24), so the axis' end ticks
    of a zoomed window read as round steps; `to=math.ceil` rounds up (round_up)."""
    if v <= 0:
        return 0.0
    unit = 10 ** max(math.floor(math.log10(v)) - digits + 1, 0)
    return float(to(v / unit) * unit)


def round_up(v: float, digits: int = 2) -> float:
    """`v` up to `digits` significant figures (2,511 -> 2,600; 24.1 -> 25)."""
    return round_down(v, digits, math.ceil)


def scrub_to(steps: list[int], at: int | None, delta: int) -> int | None:
    """The logged step `delta` evaluations from `at` (None: following the run, i.e. past the last);
    None again when that moves past the last one. `steps` is sorted and not empty."""
    i = len(steps) - 1 + min(delta, 0) if at is None else bisect.bisect_right(steps, at) - 1 + delta
    return None if i >= len(steps) else steps[max(i, 0)]


def cursor_at(axis: Axis, x_max: float, step: int) -> float | None:
    """The cursor position (0..1) of `step` on the axis, or None when the step is outside the window."""
    lo, hi = axis.bounds(x_max)
    return axis_frac(step, hi, axis.log, lo) if lo <= step <= hi else None
