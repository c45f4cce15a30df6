"""A field's check: a test of its value, and the words for what the value must be. The checks that the run's
summary (engine/summary.py) and the run directory's schema (engine/rundir/schema.py) read fields with."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Check = tuple[Callable[[Any], bool], str]  # a test of the value, and what it must be


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _text(v: Any) -> bool:
    return isinstance(v, str)


def _step(v: Any) -> bool:
    return _whole(v) and v >= 0


def or_null(check: Check) -> Check:
    return (lambda v: v is None or check[0](v)), f"{check[1]} or null"


def list_of(ok: Callable[[Any], bool], want: str) -> Check:
    return (lambda v: isinstance(v, list) and all(ok(x) for x in v)), want


STEP: Check = (_step, "a whole number ≥ 0")
STEPS: Check = ((lambda v: _whole(v) and v >= 1), "a whole number ≥ 1")
WHOLE: Check = (_whole, "a whole number")
SECONDS: Check = ((lambda v: _number(v) and v >= 0), "a number ≥ 0")
FRACTION: Check = ((lambda v: _number(v) and 0 <= v <= 1), "a number in [0, 1]")
TEXT: Check = (_text, "a string")
OBJECT: Check = ((lambda v: isinstance(v, dict)), "an object")
WHOLES = list_of(_step, "a list of whole numbers ≥ 0")
NUMBER: Check = (_number, "a finite number")
# NaN allowed: draw_share's token never drawn (engine/task/samplers.py)
NUMBERS = list_of(lambda x: isinstance(x, int | float) and not isinstance(x, bool), "a list of numbers")
LEARNED_STEPS = list_of(lambda t: t is None or _step(t), "a list of whole numbers ≥ 0 or nulls")
STRINGS = list_of(_text, "a list of strings")
OBJECTS = list_of(lambda x: isinstance(x, dict), "a list of objects")


def shown(v: Any) -> str:
    """The offending value, short and with any control character escaped (repr does)."""
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."
