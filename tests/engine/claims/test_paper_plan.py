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
