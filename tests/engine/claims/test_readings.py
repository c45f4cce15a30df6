"""Claim readings' building blocks (engine/claims/readings.py): directions per seed and the page's spreads."""

from __future__ import annotations

from engine.claims.readings import Row, geo_ratio, sooner, spread
from engine.claims.verdicts import HOLDS, UNREAD
from engine.records.group_dir import Member
from engine.records.results import ResultsRow


def _row(arm: str, seed: int, gen: float | None, budget: float = 2000) -> Row:
    m = Member(id=f"{arm}{seed}", arm=arm, values={}, seed=seed, overrides={})
    return Row(m, "finished", gen, budget, {}, {}, ResultsRow())


def test_sooner_counts_a_bound_that_decides_and_one_that_does_not() -> None:
    a = [_row("a", 0, 900), _row("a", 1, 1000), _row("a", 2, None)]
    b = [_row("b", 0, 1500), _row("b", 1, None), _row("b", 2, None)]
    o, both, bounds = sooner(a, b)
    assert list(o.agree) == [True, True, None]  # seed 1: only a got there (decides); seed 2: neither
    assert both == [(900, 1500)] and bounds == 1
    assert o.state == UNREAD
    o2, _, _ = sooner(a[:2], b[:2])
    assert o2.state == HOLDS
    o3, _, _ = sooner(b[:2], a[:2])  # b reached later, or never where a did: against in every seed
    assert list(o3.agree) == [False, False] and o3.state == "opposite"


def test_spread_is_a_range_below_8_seeds_and_a_t_interval_from_8() -> None:
    assert spread([0.9, 0.8, 1.0]) == "0.900 (0.800–1.000, n = 3)"
    assert spread([-700, -300, -500], ",.0f", sign=True) == "−500 (−700 to −300, n = 3)"
    ten = spread([float(x) for x in range(10)], ".1f")
    assert ten.startswith("4.5 [") and "95% t-interval, n = 10" in ten
    assert spread([]) == "-"


def test_geo_ratio() -> None:
    assert geo_ratio([(50, 100), (200, 100)]) == "1.00× (0.50–2.00, n = 2)"
