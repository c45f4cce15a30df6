"""The report's statistics against answers computed another way: binomial tails, all sign flips, exact bootstraps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from engine.sweep import stats
from engine.sweep.stats import mean_ci, mean_ci_rows, paired, sign_p, wilcoxon_p


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


def test_mean_ci_rows_equals_mean_ci_per_row() -> None:
    rng = np.random.default_rng(1)
    a = rng.uniform(size=(7, 5))
    a[2, 1] = a[5, 4] = a[5, 0] = np.nan  # a seed that did not log this step
    a[6, :4] = np.nan
    m, lo, hi = mean_ci_rows(a, n_boot=2000)
    for i, row in enumerate(a):
        want = mean_ci(row[np.isfinite(row)], n_boot=2000)
        assert (m[i], lo[i], hi[i]) == pytest.approx(want, abs=1e-12)


def test_paired_difference_by_seed() -> None:
    x = [0.9, 0.8, 0.95, 0.7, 0.85]
    y = [0.8, 0.8, 0.90, 0.75, 0.70]
    r = paired(x, y)
    d = np.subtract(x, y)
    assert r["n"] == 5 and r["wins"] == 3
    assert r["diff_mean"] == pytest.approx(d.mean())
    assert (r["lo"], r["hi"]) == pytest.approx(mean_ci(d)[1:])
    assert r["sign_p"] == pytest.approx(sign_p(3, 4))  # the tie (0.8, 0.8) is dropped
    assert r["wilcoxon_p"] == pytest.approx(_wilcoxon_brute(list(d)))
    with pytest.raises(ValueError, match="pair them"):
        paired([1, 2], [1])
