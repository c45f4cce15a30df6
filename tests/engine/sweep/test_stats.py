"""The report's statistics against answers computed another way: binomial tails, all sign flips, exact bootstraps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from engine.records import stats
from engine.records.stats import (
    RANGE,
    STRATIFIED,
    T_INTERVAL,
    mean_ci,
    paired,
    pooled_interval,
    seed_interval,
    seed_interval_rows,
    sign_p,
    stratified_mean_ci,
    t_cdf,
    t_quantile,
    wilcoxon_p,
)


def _wilcoxon_brute(d: list[float]) -> float:
    """Two-sided signed-rank p by listing all 2^n sign patterns of the midranks of |d| (zeros dropped)."""
    a = [x for x in d if x != 0]
    mags = sorted(abs(x) for x in a)
    rank = {m: (mags.index(m) + len(mags) - mags[::-1].index(m) + 1) / 2 for m in mags}  # 1-based midrank
    ranks = [rank[abs(x)] for x in a]
    w = sum(r for r, x in zip(ranks, a, strict=True) if x > 0)
    ws = [sum(r for r, s in zip(ranks, signs, strict=True) if s) for signs in itertools.product((0, 1), repeat=len(a))]
    below = sum(v <= w + 1e-9 for v in ws) / len(ws)
    above = sum(v >= w - 1e-9 for v in ws) / len(ws)
    return min(1.0, 2 * min(below, above))


def test_sign_p_is_the_two_sided_binomial_tail() -> None:
    assert sign_p(5, 5) == pytest.approx(2 / 32)  # all five seeds one way
    assert sign_p(4, 5) == pytest.approx(2 * 6 / 32)  # P(X <= 1) = 6/32, doubled
    assert sign_p(1, 5) == sign_p(4, 5)
    assert sign_p(5, 10) == 1.0
    assert sign_p(9, 10) == pytest.approx(2 * 11 / 1024)
    assert math.isnan(sign_p(0, 0))


def test_wilcoxon_exact_matches_the_table_and_brute_force() -> None:
    # n = 10, W+ = 8: 25 of the 1024 subsets of {1..10} sum to <= 8 (the textbook critical value at 5%)
    d = [-(i + 1) for i in range(10)]
    d[7] = 8  # rank 8 positive: W+ = 8
    assert wilcoxon_p(d) == pytest.approx(2 * 25 / 1024)
    assert wilcoxon_p([1, 2, 3, 4, 5]) == pytest.approx(2 / 32)
    rng = np.random.default_rng(3)
    for n in (3, 6, 9, 12):
        for _ in range(4):
            x = list(np.round(rng.normal(0.3, 1, n), 1))  # rounding makes tied |d| and zeros
            assert wilcoxon_p(x) == pytest.approx(_wilcoxon_brute(x), abs=1e-12), x


def test_wilcoxon_zeros_dropped_and_none_left_is_nan() -> None:
    assert wilcoxon_p([0, 0, 1, 2, 3]) == wilcoxon_p([1, 2, 3])
    assert math.isnan(wilcoxon_p([0.0, 0.0]))


def test_wilcoxon_normal_approximation_beyond_25_is_close_to_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    d = list(np.round(rng.normal(0.4, 1, 30), 2))
    approx = wilcoxon_p(d)
    monkeypatch.setattr(stats, "WILCOXON_EXACT_MAX", 100)
    exact = wilcoxon_p(d)
    assert exact < 0.2 and approx == pytest.approx(exact, abs=0.005)


def _exact_bootstrap_quantiles(xs: list[float], level: float) -> tuple[float, float]:
    """The percentile interval of the mean's bootstrap distribution, by listing all n^n resamples."""
    means = np.array([np.mean(s) for s in itertools.product(xs, repeat=len(xs))])
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def test_mean_ci_approaches_the_exact_bootstrap() -> None:
    xs = [0.2, 0.5, 0.9, 1.0, 0.95]
    m, lo, hi = mean_ci(xs, n_boot=100_000)
    elo, ehi = _exact_bootstrap_quantiles(xs, 0.95)
    assert m == pytest.approx(np.mean(xs))
    assert lo == pytest.approx(elo, abs=0.02) and hi == pytest.approx(ehi, abs=0.02)
    assert lo < m < hi


def test_mean_ci_small_cases() -> None:
    assert mean_ci([0.7]) == (0.7, 0.7, 0.7)
    assert all(math.isnan(v) for v in mean_ci([]))
    assert mean_ci([0.0, 1.0]) == (0.5, 0.0, 1.0)  # resample means 0, 0.5, 1 with 1/4, 1/2, 1/4
    assert mean_ci([3.0, 3.0, 3.0]) == (3.0, 3.0, 3.0)
    assert mean_ci([1, 2, 5], seed=1) == mean_ci([1, 2, 5], seed=1)  # a fixed seed: the same interval


def test_seed_interval_rows_equals_seed_interval_per_row() -> None:
    """Rows of 10 seeds with some not logged: 10, 9 and 8 values get the t-interval, 7 and 1 the range."""
    rng = np.random.default_rng(1)
    a = rng.uniform(size=(7, 10))
    a[2, 1] = a[5, 4] = a[5, 0] = np.nan  # seeds that did not log this step
    a[3, :3] = np.nan
    a[6, :9] = np.nan
    a[4, :] = np.nan
    m, lo, hi = seed_interval_rows(a)
    kinds = set()
    for i, row in enumerate(a):
        want = seed_interval(row[np.isfinite(row)])
        kinds.add(want.kind if want.n else "")
        got = (m[i], lo[i], hi[i])
        assert got == pytest.approx((want.mean, want.lo, want.hi), abs=1e-12, nan_ok=True)
    assert kinds == {RANGE, T_INTERVAL, ""}


def test_paired_difference_by_seed() -> None:
    x = [0.9, 0.8, 0.95, 0.7, 0.85]
    y = [0.8, 0.8, 0.90, 0.75, 0.70]
    r = paired(x, y)
    d = np.subtract(x, y)
    assert r["n"] == 5 and r["wins"] == 3
    assert r["diff_mean"] == pytest.approx(d.mean())
    assert "lo" not in r and "hi" not in r  # no bootstrap: the spread is seed_interval's, as the report gives it
    assert r["sign_p"] == pytest.approx(sign_p(3, 4))  # the tie (0.8, 0.8) is dropped
    assert r["wilcoxon_p"] == pytest.approx(_wilcoxon_brute(list(d)))
    with pytest.raises(ValueError, match="pair them"):
        paired([1, 2], [1])


def test_t_quantile_against_a_table() -> None:
    """t(0.975, df) to 6 decimals from a printed table of Student's t."""
    table = {1: 12.706205, 2: 4.302653, 4: 2.776445, 7: 2.364624, 9: 2.262157, 29: 2.045230, 60: 2.000298}
    for df, want in table.items():
        assert t_quantile(0.975, df) == pytest.approx(want, abs=1e-6), df
    assert t_quantile(0.5, 5) == pytest.approx(0.0, abs=1e-9)
    assert t_cdf(1.0, 1) == pytest.approx(0.75)  # Cauchy: 1/2 + atan(1)/pi
    assert t_cdf(1.0, 2) == pytest.approx(0.5 + 0.5 / math.sqrt(3))  # df 2: 1/2 + t / (2 sqrt(2 + t^2))


def test_seed_interval_is_a_range_below_8_seeds() -> None:
    sp = seed_interval([0.2, 0.9, 0.4])
    assert (sp.mean, sp.lo, sp.hi, sp.n, sp.kind) == pytest.approx((0.5, 0.2, 0.9, 3, RANGE))
    assert seed_interval([1.0] * 7).kind == RANGE
    assert seed_interval([]).n == 0 and math.isnan(seed_interval([]).mean)


def test_seed_interval_is_a_t_interval_from_8_seeds() -> None:
    """xs = 1..8: mean 4.5, s^2 = sum (x - 4.5)^2 / 7 = 42 / 7 = 6, half-width t(0.975, 7) sqrt(6 / 8)."""
    sp = seed_interval([1, 2, 3, 4, 5, 6, 7, 8])
    half = 2.364624 * math.sqrt(6 / 8)
    assert sp.kind == T_INTERVAL and sp.n == 8
    assert (sp.mean, sp.lo, sp.hi) == pytest.approx((4.5, 4.5 - half, 4.5 + half), abs=1e-5)


def test_stratified_bootstrap_resamples_within_each_stratum() -> None:
    """A = {0, 2}, B = {10, 10}: A's resample mean is 0, 1 or 2 (1/4, 1/2, 1/4) and B's is 10, so the pooled
    mean (2 mean_A + 2 · 10) / 4 is 5, 5.5 or 6: the 95% interval is [5, 6]. Pooling the 4 values and
    resampling them together would reach 0 (four zeros: 1/256) and 10, far wider."""
    m, lo, hi = stratified_mean_ci([[0, 2], [10, 10]], n_boot=20000)
    assert (m, lo, hi) == (5.5, 5.0, 6.0)
    assert mean_ci([0, 2, 10, 10], n_boot=20000)[1] < 4.0  # unstratified: the tasks' pace leaks in
    # A = {0, 4, 8} with B = {1}: the pooled mean (sum of A's resample + 1) / 4; its exact 2.5% and 97.5%
    # quantiles over the 27 resamples of A: sums 0 (1/27), 4 (3/27), ... so lo = (0 + 1) / 4 = 0.25
    m, lo, hi = stratified_mean_ci([[0, 4, 8], [1]], n_boot=100_000)
    assert m == pytest.approx(13 / 4) and lo == pytest.approx(0.25) and hi == pytest.approx(25 / 4)


def test_pooled_interval_needs_8_seeds_in_every_stratum() -> None:
    small = pooled_interval([[0.1, 0.2, 0.3], [1.0] * 9])
    assert small.kind == RANGE and (small.lo, small.hi, small.n) == (0.1, 1.0, 12)
    big = pooled_interval([[float(i) for i in range(8)], [10.0 + i for i in range(8)]])
    assert big.kind == STRATIFIED and big.mean == pytest.approx(8.5)
    assert (big.lo, big.hi) == pytest.approx(stratified_mean_ci([list(range(8)), [10.0 + i for i in range(8)]])[1:])


def test_a_range_with_a_negative_end_reads_to_not_a_dash_before_a_minus() -> None:
    assert stats.range_text(0.79, 0.91, ".2f") == "0.79–0.91"
    assert stats.range_text(-0.031, -0.01, ".3f") == "-0.031 to -0.010"
    assert stats.bracketed(-0.02, -0.031, -0.01, 5, True) == "-0.020 (-0.031 to -0.010) n=5"
