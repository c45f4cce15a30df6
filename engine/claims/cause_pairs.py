"""What the cause studies share (§4.2, eqs. 3-6; ours): their cells, pooled values and a cure's cost.

The studies decouple_factorial, decouple_direction, cure_decouple and cure_skew_mul: what shortens a starved
row of E, and what its direction carries. Each part is checked pair by pair from the kept group
(engine/claims/readings.py); values pooled over cells and seeds are a mean with its range, never an interval
(the cells are not seeds)."""

from __future__ import annotations

from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group
from engine.records.stats import range_text


def _tasks(group: Group) -> str:
    return f"{len(group.spec.seeds)} × 1 ({group.base.data.op})"


def _pooled(xs: list[float]) -> str:
    """Values pooled over cells and seeds: their mean and range (a t-interval would treat cells as seeds)."""
    if not xs:
        return "-"
    text = f"{sum(xs) / len(xs):.3f} ({range_text(min(xs), max(xs), '.3f')}, n = {len(xs)})"
    return text.replace("-", "−")  # the minus sign of every other reading (readings.spread)


CELLS = {  # decouple_cause's starved cells (the parent arm without its optimizer), in a part's words
    "r0.01": "at r = 0.01",
    "m1_r1": "with one pair at r = 1",
    "m1_matched": "with one pair at matched draws",
    "m3_r1": "with three pairs at r = 1",
}


def _cell(parent: str) -> str:
    """The cell of a parent arm: `adam_m1_r1` and `sgd_m1_r1` are both `m1_r1`."""
    return parent.split("_", 1)[1] if "_" in parent else parent


TOL = 0.01  # a cure "costs nothing" where it lowers an accuracy by less than this, pair by pair


def _costs_nothing(d: list[float]) -> Outcome:
    """Per pair: the cure's change is not a loss of TOL or more (opposite: it is)."""
    return Outcome([x > -TOL for x in d], [x <= -TOL for x in d])
