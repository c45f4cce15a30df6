"""Capped series for live charts: a fixed number of step buckets on a linear and on a log axis.

A run of 100k steps and a run of 1k steps both draw from at most `BUCKETS` points per column, so
a redraw costs the same whatever the run length. Each bucket keeps the min, max and last value
that fell in it, which preserves spikes (e.g. a validation-accuracy jump) under downsampling.

The log step axis is log10(1 + step), so step 0 sits at the axis' origin and is labelled 0.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any

BUCKETS = 320  # about 2 braille pixels per terminal column on a 160-column chart
RAW_CAP = 20_000  # logged values kept per column for zoom, cursor and smoothing (then every other)


def _log(x: float) -> float:
    return math.log10(1.0 + max(x, 0.0))


def axis_frac(x: float, x_max: float, log: bool, x_lo: float = 0.0) -> float:
    """Position of step `x` on an axis over [x_lo, x_max], log10(1 + step) or linear, in [0, 1]."""
    if log:
        lo, hi = _log(x_lo), _log(max(x_max, x_lo + 1.0))
        f = (_log(x) - lo) / max(hi - lo, 1e-12)
    else:
        f = (x - x_lo) / max(x_max - x_lo, 1e-12)
    return min(max(f, 0.0), 1.0)


def axis_step(f: float, x_max: float, log: bool, x_lo: float = 0.0) -> float:
    """The step at position `f` of that axis (the inverse of axis_frac)."""
    if log:
        lo, hi = _log(x_lo), _log(max(x_max, x_lo + 1.0))
        return 10 ** (lo + f * (hi - lo)) - 1.0
    return x_lo + f * (x_max - x_lo)


@dataclass
class Point:
    """One bucket of a series: the position on the axis, and the min, max and last y in it."""

    fx: float
    lo: float
    hi: float
    last: float


def add_to_bucket(buckets: dict[int, Point], fx: float, y: float, n: int) -> None:
    """Fold the value y at axis fraction fx into the one of `n` buckets it falls in (min, max, last)."""
    i = min(int(fx * n), n - 1)
    b = buckets.get(i)
    if b is None:
        buckets[i] = Point(fx, y, y, y)
    else:
        b.fx, b.last = fx, y
        b.lo, b.hi = min(b.lo, y), max(b.hi, y)


class Trace:
    """One metric against step, bucketed for both axis scales as values arrive (O(1) per value)."""

    def __init__(self, x_max: float, n: int = BUCKETS) -> None:
        self.x_max = max(float(x_max), 1.0)
        self.n = n
        self.buckets: dict[bool, dict[int, Point]] = {False: {}, True: {}}
        self.count = 0
        self.last = float("nan")
        self.last_x = 0.0

    def add(self, x: float, y: float) -> None:
        if y is None or not math.isfinite(y):
            return
        self.count += 1
        self.last, self.last_x = y, x
        for log, buckets in self.buckets.items():
            add_to_bucket(buckets, axis_frac(x, self.x_max, log), y, self.n)

    def points(self, log: bool) -> list[Point]:
        buckets = self.buckets[log]
        return [buckets[i] for i in sorted(buckets)]


class Raw:
    """Every finite value of one column with its step (evenly thinned past `cap`)."""

    def __init__(self, cap: int = RAW_CAP) -> None:
        self.cap = cap
        self.xs: list[float] = []
        self.ys: list[float] = []

    def add(self, x: float, y: float) -> None:
        if not math.isfinite(y):
            return
        self.xs.append(x)
        self.ys.append(y)
        if len(self.xs) > self.cap:
            self.xs, self.ys = self.xs[::2], self.ys[::2]

    def at(self, x: float) -> tuple[float, float] | None:
        """The logged (step, value) nearest to step `x`; None outside the logged steps, where no line is
        drawn (a fork opened without its parent's rows must not read its first row at the parent's steps)."""
        eps = 1e-9 * max(1.0, abs(self.xs[-1])) if self.xs else 0.0  # an axis position's float rounding
        if not self.xs or not self.xs[0] - eps <= x <= self.xs[-1] + eps:
            return None
        i = bisect.bisect_left(self.xs, x)
        cands = [j for j in (i - 1, i) if 0 <= j < len(self.xs)]
        j = min(cands, key=lambda k: abs(self.xs[k] - x))
        return self.xs[j], self.ys[j]


def ema(ys: list[float], weight: float) -> list[float]:
    """Exponential moving average with TensorBoard's debiasing: s_t = w·s_{t-1} + (1-w)·y_t, / (1-w^t)."""
    out, s = [], 0.0
    for t, y in enumerate(ys, start=1):
        s = weight * s + (1 - weight) * y
        out.append(s / (1 - weight**t))
    return out


def bucketed(xs: list[float], ys: list[float], x_lo: float, x_max: float, log: bool, n: int = BUCKETS) -> list[Point]:
    """Points of (xs, ys) inside [x_lo, x_max] on that axis, `n` buckets with min, max and last."""
    out: dict[int, Point] = {}
    lo_i = bisect.bisect_left(xs, x_lo)
    hi_i = bisect.bisect_right(xs, x_max)
    for x, y in zip(xs[lo_i:hi_i], ys[lo_i:hi_i], strict=True):
        add_to_bucket(out, axis_frac(x, x_max, log, x_lo), y, n)
    return [out[i] for i in sorted(out)]


class Snapshots:
    """Up to `cap` evenly spaced snapshots of a vector over time (per-token gradient norms, Fig. 3).

    When full, every other snapshot is dropped and the stride doubles, so spacing stays uniform.
    """

    def __init__(self, cap: int = 160) -> None:
        self.cap = cap
        self.stride = 1
        self.seen = 0
        self.items: list[tuple[int, Any]] = []

    def add(self, step: int, values: Any) -> None:
        if self.seen % self.stride == 0:
            self.items.append((step, values))
            if len(self.items) > self.cap:
                self.items = self.items[::2]
                self.stride *= 2
        self.seen += 1

    def upto(self, step: int | None) -> list[tuple[int, Any]]:
        """The snapshots taken at or before `step` (all of them for None)."""
        if step is None:
            return list(self.items)
        return [it for it in self.items if it[0] <= step]

    def at(self, step: int | None) -> tuple[int, Any] | None:
        """The last snapshot at or before `step` (the latest for None)."""
        items = self.upto(step)
        return items[-1] if items else None
