"""A member's results.csv row, defined in engine/records/results.py (below sweep: the group records read it)."""

from __future__ import annotations

from engine.records.results import (
    ENDED,
    SUMMARY_FIELDS,
    ProbeTally,
    ResultsRow,
    cell_number,
    failed_row,
    results_row,
)

__all__ = [
    "ENDED",
    "SUMMARY_FIELDS",
    "ProbeTally",
    "ResultsRow",
    "cell_number",
    "failed_row",
    "results_row",
]
