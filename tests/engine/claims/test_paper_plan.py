"""`grok sweep --plan`'s wall times (engine/claims/paper.py): the first duration a preset records, in minutes."""

from __future__ import annotations

import pytest

from engine.claims.paper import PlannedSweep


@pytest.mark.parametrize(
    ("wall_time", "minutes"),
    [
        ("1 h 42 min for its 40 members", 102.0),  # read as 42 before: the hours were dropped
        ("39 min for its 30 members", 39.0),
        ("2 min 50 s for seeds 0 and 1", 2 + 50 / 60),
        ("35 s for its 150 one-step forks of 5 seeds", 35 / 60),
        ("about 87 min estimated, then 300 min", 87.0),  # the first duration only
        ("not yet measured whole", None),
        ("1 worker x 1 thread, 5 seeds", None),  # counts and seeds are not durations
    ],
)
def test_the_first_duration_in_minutes(wall_time: str, minutes: float | None) -> None:
    got = PlannedSweep("x", "", 1, 1, wall_time).minutes
    assert got == (None if minutes is None else pytest.approx(minutes))


@pytest.mark.parametrize(
    ("wall_time", "rounding", "hours"),
    [
        ("1 h 42 min for its 40 members", 1.0, True),
        ("39 min for its 30 members", 1.0, False),
        ("11.8 min for 54 members", 0.1, False),
        ("2 min 50 s for seeds 0 and 1", 1 / 60, False),
        ("35 s for its 150 one-step forks", 1 / 60, False),
        ("not yet measured whole", None, False),
    ],
)
def test_a_recorded_time_says_how_it_was_rounded(wall_time: str, rounding: float | None, hours: bool) -> None:
    row = PlannedSweep("x", "", 1, 1, wall_time)
    assert row.rounding == (None if rounding is None else pytest.approx(rounding))
    assert row.in_hours is hours


@pytest.mark.parametrize(
    ("times", "total"),
    [
        (["2 h 10 min for its 70 trained members"], "2 h 10 min"),  # was 130.0 min
        (["89 min for its 20 members"], "89 min"),  # was 89.0 min
        (["11.8 min for 6", "0.5 min on a quiet machine"], "12.3 min"),  # tenths, as the rows
        (["11.8 min for 6", "39 min for 30"], "51 min"),  # no finer than the coarsest row: 50.8 is not known
        (["2 min 50 s for seeds 0 and 1", "35 s for forks"], "3 min 25 s"),
        (["1 h 42 min", "1.5 min"], "1 h 44 min"),
    ],
)
def test_the_plans_total_is_rounded_and_written_as_its_rows(times: list[str], total: str) -> None:
    from grok_tui.commands import sweep

    rows = [PlannedSweep(f"p{i}", "", 1, 1, t) for i, t in enumerate(times)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("engine.claims.paper.plan", lambda names: rows)
        last = sweep.plan_table(None).splitlines()[-1]
    assert last.split("  ")[-1].startswith(f"{total} summed over the {len(rows)} of {len(rows)} presets")
