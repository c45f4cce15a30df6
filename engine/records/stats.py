"""The statistics of sweep reports: quantiles with +inf for members that never generalized, and per-cell summaries.

A member that never reached 95% counts as "more than its budget" (+inf) in the median of
`generalized_step`, so a cell where most seeds failed reads `>N` rather than a flattering median
of the lucky seeds. The grokking delay is taken over the seeds that both memorized and generalized.

A metric's spread over seeds is `seed_interval`: below `MIN_SEEDS_FOR_INTERVAL` seeds the range
[min, max] and nothing more (a percentile bootstrap of 3 seeds *is* [min, max], since a resample
of three copies of the minimum has probability 1/27 > 2.5%, and at n = 5 a nominal 95% percentile
interval covered the mean of simulated normal data 83% of the time); from 8 seeds Student's
t-interval. A ratio pooled over tasks resamples seeds within each task (`stratified_mean_ci`), so
no resample takes a task's pairs for another's. For arms run on the same seeds, `paired` adds an
exact two-sided sign test and a two-sided Wilcoxon signed-rank test (exact for n <= 25 non-zero
differences, the normal approximation with the tie correction beyond).

A group's curve over seeds follows the same rule at every step (`seed_interval_rows`, the figures'
band).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from engine.events import Status
from engine.records.results import ENDED

INF = math.inf


def quantile(xs: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default); +inf sorts last."""
    s = sorted(xs)
    if not s:
        return math.nan
    pos = q * (len(s) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if s[hi] == INF:
        return INF if pos > lo or s[lo] == INF else s[lo]
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One cell: seeds, how many generalized, medians and IQRs, and the last step each member ran."""
    n = len(rows)
    ended = [r for r in rows if r.get("status") in ENDED]
    gen = [r.get("generalized_step") for r in ended]
    steps = [float(g) if g is not None else INF for g in gen]
    delays = [float(d) for d in (r.get("grokking_delay") for r in ended) if d is not None]
    vals = [v for v in (r.get("final_val_acc") for r in ended) if v is not None]
    budget = max((float(r.get("max_steps") or 0) for r in rows), default=0)
    stops = [float(x) for x in (r.get("steps") for r in ended) if x is not None]
    statuses = Counter(r.get("status") or "missing" for r in rows)
    return {
        "n": n,
        "ended": len(ended),
        "generalized": sum(g is not None for g in gen),
        "frac_generalized": (sum(g is not None for g in gen) / len(ended)) if ended else math.nan,
        "gen_median": quantile(steps, 0.5),
        "gen_q1": quantile(steps, 0.25),
        "gen_q3": quantile(steps, 0.75),
        "delay_median": quantile(delays, 0.5),
        "delay_q1": quantile(delays, 0.25),
        "delay_q3": quantile(delays, 0.75),
        "final_val_acc": quantile(vals, 0.5),
        "budget": budget,
        "stop_median": quantile(stops, 0.5),
        "stop_min": min(stops, default=math.nan),
        "stop_max": max(stops, default=math.nan),
        "status": ", ".join(f"{v} {k}" for k, v in sorted(statuses.items()) if k != Status.FINISHED),
    }


Row = TypeVar("Row", bound=Mapping[str, Any])


def cells(rows: Iterable[Row], keys: list[str]) -> dict[tuple[str, ...], list[Row]]:
    """Rows grouped by their values of `keys` (as text), in order of first appearance."""
    out: dict[tuple[str, ...], list[Row]] = {}
    for r in rows:
        out.setdefault(tuple(str(r.get(k, "")) for k in keys), []).append(r)
    return out


WILCOXON_EXACT_MAX = 25  # up to this many non-zero differences the signed-rank p is exact


def _boot_means(a: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Bootstrap means of each row of `a` (rows, n): (rows, n_boot); one resampling of the n seeds for every row."""
    rng = np.random.Generator(np.random.PCG64(seed))
    idx = rng.integers(0, a.shape[1], size=(n_boot, a.shape[1]))  # with replacement
    means: np.ndarray = a[:, idx].mean(axis=2)
    return means


def mean_ci(xs: Iterable[float], level: float = 0.95, n_boot: int = 10000, seed: int = 0) -> tuple[float, float, float]:
    """(mean, lo, hi): the mean over seeds and its percentile-bootstrap interval; NaNs for no values.

    One value gives lo = hi = mean: a single seed says nothing about the spread. No report reads it (their
    spread is `seed_interval`'s); docs/REPRODUCTION.md's scripts quote it.
    """
    a = np.asarray([float(x) for x in xs], dtype=float)
    if a.size == 0:
        return math.nan, math.nan, math.nan
    m = float(a.mean())
    if a.size == 1:
        return m, m, m
    means = _boot_means(a[None, :], n_boot, seed)[0]
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return m, float(lo), float(hi)


def sign_p(wins: int, n: int) -> float:
    """Exact two-sided sign test: P of a split at least this uneven among n non-tied pairs, X ~ Bin(n, 1/2)."""
    if n == 0:
        return math.nan
    k = min(wins, n - wins)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def midranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n of `a`, ties given their mean rank (midranks)."""
    _, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)  # a tie at sorted places i..j (0-based) ends at j + 1: its mean rank is (i + j)/2 + 1
    return (ends - (counts - 1) / 2)[inverse]


def wilcoxon_p(d: Iterable[float]) -> float:
    """Two-sided Wilcoxon signed-rank p of the differences `d`, zeros dropped; NaN when none is left.

    W+ is the sum of the ranks of |d| over the positive differences. Under H0 each sign is +/- with
    probability 1/2 independently, so for n <= 25 the exact null distribution of W+ is counted by
    dynamic programming over the (doubled, so integer) midranks: exact also with tied |d|. Beyond,
    the normal approximation with mean n(n+1)/4 and the tie-corrected variance, with continuity
    correction.
    """
    a = np.asarray([float(x) for x in d], dtype=float)
    a = a[a != 0]
    n = len(a)
    if n == 0:
        return math.nan
    r2 = np.rint(2 * midranks(np.abs(a))).astype(int)  # doubled midranks are integers
    w2 = int(r2[a > 0].sum())
    total = int(r2.sum())
    if n <= WILCOXON_EXACT_MAX:
        counts = [0] * (total + 1)  # counts[s]: sign patterns whose positive doubled ranks sum to s
        counts[0] = 1
        for r in r2:
            for s in range(total, r - 1, -1):
                counts[s] += counts[s - r]
        below = sum(counts[: w2 + 1])
        above = sum(counts[w2:])
        return min(1.0, 2 * min(below, above) / (1 << n))
    ranks = r2 / 2
    mu = n * (n + 1) / 4
    _, tie_sizes = np.unique(np.abs(a), return_counts=True)
    var = n * (n + 1) * (2 * n + 1) / 24 - float((tie_sizes**3 - tie_sizes).sum()) / 48
    w = float(ranks[a > 0].sum())
    z = max(abs(w - mu) - 0.5, 0.0) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def paired(xs: Iterable[float], ys: Iterable[float]) -> dict[str, Any]:
    """x - y paired by seed: n, diff_mean, sign_p, wilcoxon_p and wins (x > y). The spread of the
    difference is `seed_interval` of the differences, as every report line gives it."""
    x = np.asarray([float(v) for v in xs], dtype=float)
    y = np.asarray([float(v) for v in ys], dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired: {len(x)} values against {len(y)}; pair them by seed first")
    d = x - y
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    return {
        "n": len(d),
        "diff_mean": float(d.mean()) if len(d) else math.nan,
        "sign_p": sign_p(wins, wins + losses),
        "wilcoxon_p": wilcoxon_p(d),
        "wins": wins,
    }


MIN_SEEDS_FOR_INTERVAL = 8  # below this many seeds a spread is the range [min, max], never a "95% CI"
RANGE = "range"
T_INTERVAL = "95% t-interval"
STRATIFIED = "95% stratified bootstrap"


@dataclass(frozen=True)
class Spread:
    """A mean over seeds with its spread: `kind` says what [lo, hi] is (RANGE, T_INTERVAL, STRATIFIED)."""

    mean: float
    lo: float
    hi: float
    n: int
    kind: str


def t_cdf(t: float, df: int) -> float:
    """Student's t CDF for integer df, by the closed-form finite sums (Abramowitz & Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    if df % 2:  # odd: (2/pi) [theta + sin(theta) (cos + 2/3 cos^3 + ... + (2·4..(df-3))/(1·3..(df-2)) cos^(df-2))]
        term, acc = c, c if df > 1 else 0.0
        for k in range(3, df - 1, 2):
            term *= c * c * (k - 1) / k
            acc += term
        a = (2 / math.pi) * (theta + s * acc)
    else:  # even: sin(theta) [1 + 1/2 cos^2 + ... + (1·3..(df-3))/(2·4..(df-2)) cos^(df-2)]
        term, acc = 1.0, 1.0
        for k in range(2, df - 1, 2):
            term *= c * c * (k - 1) / k
            acc += term
        a = s * acc
    return 0.5 + a / 2  # a = P(|T| < t) signed: A(t|df) of A&S


def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with df degrees of freedom, by bisection on `t_cdf` (to 1e-12)."""
    if not 0 < p < 1 or df < 1:
        raise ValueError(f"t_quantile: p {p} must lie in (0, 1) and df {df} be at least 1")
    lo, hi = -1e6, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2


def seed_interval(xs: Iterable[float], level: float = 0.95) -> Spread:
    """The mean over seeds and its spread: [min, max] (RANGE) below 8 seeds, the t-interval from 8.

    t-interval: mean ± t_{n-1, (1+level)/2} · s / sqrt(n), s the sample standard deviation.
    """
    a = np.asarray([float(x) for x in xs], dtype=float)
    n = int(a.size)
    if n == 0:
        return Spread(math.nan, math.nan, math.nan, 0, RANGE)
    m = float(a.mean())
    if n < MIN_SEEDS_FOR_INTERVAL:
        return Spread(m, float(a.min()), float(a.max()), n, RANGE)
    half = t_quantile((1 + level) / 2, n - 1) * float(a.std(ddof=1)) / math.sqrt(n)
    return Spread(m, m - half, m + half, n, T_INTERVAL if level == 0.95 else f"{level:.0%} t-interval")


def seed_interval_rows(a: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`seed_interval` of every row of `a` (rows, seeds), NaN = not logged: (mean, lo, hi) per row.

    A row with fewer than 8 values gets its range [min, max], one with 8 or more the t-interval of its
    mean; each row's lo and hi equal `seed_interval` of that row's values (the group figure's band per step).
    """
    a = np.asarray(a, dtype=float)
    mean = np.full(a.shape[0], math.nan)
    lo, hi = mean.copy(), mean.copy()
    ok = np.isfinite(a)
    counts = ok.sum(axis=1)
    for n in np.unique(counts):
        if n == 0:
            continue
        rows = np.flatnonzero(counts == n)
        vals = a[rows][ok[rows]].reshape(len(rows), n)  # each row's finite values, in seed order
        mean[rows] = vals.mean(axis=1)
        if n < MIN_SEEDS_FOR_INTERVAL:
            lo[rows], hi[rows] = vals.min(axis=1), vals.max(axis=1)
            continue
        half = t_quantile((1 + level) / 2, int(n) - 1) * vals.std(axis=1, ddof=1) / math.sqrt(n)
        lo[rows], hi[rows] = mean[rows] - half, mean[rows] + half
    return mean, lo, hi


def range_text(lo: float, hi: float, f: str) -> str:
    """A range as "0.790–0.910", or "-0.031 to -0.010" where its low end is negative (never "-0.031–-0.010")."""
    return f"{lo:{f}}{' to ' if lo < 0 else '–'}{hi:{f}}"


def bracketed(mean: float, lo: float, hi: float, n: int, is_range: bool, f: str = ".3f") -> str:
    """A mean over seeds in a table cell: "0.842 (0.790–0.910) n=3" for the range, "0.842 [0.800, 0.880] n=10"
    for an interval (the table's title says which)."""
    return f"{mean:{f}} ({range_text(lo, hi, f)}) n={n}" if is_range else f"{mean:{f}} [{lo:{f}}, {hi:{f}}] n={n}"


def put_spread(row: dict[str, Any], col: str, sp: Spread) -> None:
    """A Spread as a report row's interval column: <col>, <col>_lo, <col>_hi, <col>_n and <col>_interval."""
    for suffix, v in (("", sp.mean), ("_lo", sp.lo), ("_hi", sp.hi), ("_n", sp.n), ("_interval", sp.kind)):
        row[col + suffix] = v


def stratified_mean_ci(
    strata: Sequence[Sequence[float]], level: float = 0.95, n_boot: int = 10000, seed: int = 0
) -> tuple[float, float, float]:
    """(mean, lo, hi): the mean of all values and its percentile bootstrap, resampling within each stratum.

    Each resample draws every stratum's values from that stratum only (with replacement, its own
    size), so a task's seeds never stand in for another task's: the pooled mean's spread is the
    within-task spread, not the difference between tasks' paces.
    """
    groups = [np.asarray([float(x) for x in g], dtype=float) for g in strata if len(g)]
    total = sum(g.size for g in groups)
    if total == 0:
        return math.nan, math.nan, math.nan
    m = float(sum(g.sum() for g in groups) / total)
    rng = np.random.Generator(np.random.PCG64(seed))
    sums = np.zeros(n_boot)
    for g in groups:
        idx = rng.integers(0, g.size, size=(n_boot, g.size))
        sums += g[idx].sum(axis=1)
    lo, hi = np.quantile(sums / total, [(1 - level) / 2, (1 + level) / 2])
    return m, float(lo), float(hi)


def pooled_interval(strata: Sequence[Sequence[float]], level: float = 0.95, seed: int = 0) -> Spread:
    """A mean pooled over strata (tasks): the stratified bootstrap when every stratum has 8 seeds, else the range."""
    groups = [list(g) for g in strata if len(g)]
    values = [float(x) for g in groups for x in g]
    if not values:
        return Spread(math.nan, math.nan, math.nan, 0, RANGE)
    if min(len(g) for g in groups) < MIN_SEEDS_FOR_INTERVAL:
        return Spread(sum(values) / len(values), min(values), max(values), len(values), RANGE)
    m, lo, hi = stratified_mean_ci(groups, level, seed=seed)
    return Spread(m, lo, hi, len(values), STRATIFIED)
