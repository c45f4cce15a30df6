"""The zoom and scrubber maths of grok_tui/charts/zoom.py, against answers worked out by hand."""

from __future__ import annotations

import math

import pytest

from grok_tui.charts.series import axis_step
from grok_tui.charts.views import Axis
from grok_tui.charts.zoom import cursor_at, round_down, round_up, scrub_to, zoom_in


def test_zoom_without_a_cursor_fits_the_steps_run_so_far_once() -> None:
    axis = Axis(log=True)
    assert zoom_in(axis, 10_000, 400) == ((0.0, 400.0), None)
    assert zoom_in(Axis(window=(0.0, 400.0)), 10_000, 400) is None  # already fitted: nothing changes
    assert zoom_in(axis, 10_000, 3) == ((0.0, 10.0), None)  # at least ten steps


def test_linear_zoom_halves_the_span_around_the_cursor_and_keeps_it_on_its_step() -> None:
    axis = Axis(log=False, cursor=0.5)  # step 5,000 of 0..10,000
    (lo, hi), cursor = zoom_in(axis, 10_000, 10_000)  # type: ignore[misc]
    assert (lo, hi) == (2500.0, 7500.0)
    assert cursor is not None and axis_step(cursor, hi, False, lo) == pytest.approx(5000.0)


def test_log_zoom_halves_the_span_in_log_space() -> None:
    axis = Axis(log=True, cursor=0.5)
    c = axis.cursor_step(10_000)
    assert c is not None
    (lo, hi), cursor = zoom_in(axis, 10_000, 10_000)  # type: ignore[misc]
    span = math.log10(hi + 1) - math.log10(lo + 1)
    # half the span, to within the rounding of the window's ends to 2 significant figures (round ticks)
    assert span == pytest.approx(math.log10(10_001) / 2, rel=0.05)
    assert (lo, hi) == (round_down(lo), round_up(hi))
    assert cursor is not None and axis_step(cursor, hi, True, lo) == pytest.approx(c)


def test_the_scrubber_steps_through_logged_evaluations_and_past_the_last_follows_the_run() -> None:
    steps = [0, 100, 200, 300]
    assert scrub_to(steps, None, -1) == 200  # from following the run: one back from the last
    assert scrub_to(steps, 200, -1) == 100
    assert scrub_to(steps, 0, -5) == 0  # clamped at the first
    assert scrub_to(steps, 200, 1) == 300
    assert scrub_to(steps, 300, 1) is None  # past the last: follow the run again
    assert scrub_to(steps, 150, 1) == 200  # between two evaluations: counts from the one before


def test_the_cursor_follows_a_step_inside_the_window_only() -> None:
    assert cursor_at(Axis(log=False), 1000, 250) == pytest.approx(0.25)
    assert cursor_at(Axis(log=False, window=(500.0, 1000.0)), 1000, 250) is None
