"""Capped series for live charts: a fixed number of step buckets on a linear and on a log axis.

A run of 100k steps and a run of 1k steps both draw from at most `BUCKETS` points per column, so
a redraw costs the same whatever the run length. Each bucket keeps the min, max and last value
that fell in it, which preserves spikes (e.g. a validation-accuracy jump) under downsampling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BUCKETS = 320  # about 2 braille pixels per terminal column on a 160-column chart


def axis_frac(x: float, x_max: float, log: bool) -> float:
    """Position of step `x` on an axis over [1, x_max] (log) or [0, x_max] (linear), in [0, 1]."""
    if log:
        top = math.log10(max(x_max, 10.0))
        return min(max(math.log10(max(x, 1.0)) / top, 0.0), 1.0)
    return min(max(x / max(x_max, 1.0), 0.0), 1.0)


@dataclass
class Point:
    """One bucket of a series: the position on the axis, and the min, max and last y in it."""

    fx: float
    lo: float
    hi: float
    last: float


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
            fx = axis_frac(x, self.x_max, log)
            i = min(int(fx * self.n), self.n - 1)
            b = buckets.get(i)
            if b is None:
                buckets[i] = Point(fx, y, y, y)
            else:
                b.fx, b.last = fx, y
                b.lo, b.hi = min(b.lo, y), max(b.hi, y)

    def points(self, log: bool) -> list[Point]:
        buckets = self.buckets[log]
        return [buckets[i] for i in sorted(buckets)]


def trace_of(xs: list[float], ys: list[float], x_max: float | None = None) -> Trace:
    """A trace built from whole columns (a finished run read from its metrics.csv)."""
    t = Trace(x_max if x_max is not None else (max(xs) if xs else 1.0))
    for x, y in zip(xs, ys, strict=True):
        t.add(x, y)
    return t


class Snapshots:
    """Up to `cap` evenly spaced snapshots of a vector over time (per-token gradient norms, Fig. 3).

    When full, every other snapshot is dropped and the stride doubles, so spacing stays uniform.
    """

    def __init__(self, cap: int = 160) -> None:
        self.cap = cap
        self.stride = 1
        self.seen = 0
        self.items: list[tuple[int, tuple[float, ...]]] = []

    def add(self, step: int, values: tuple[float, ...]) -> None:
        if self.seen % self.stride == 0:
            self.items.append((step, values))
            if len(self.items) > self.cap:
                self.items = self.items[::2]
                self.stride *= 2
        self.seen += 1
