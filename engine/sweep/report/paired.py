"""`grok report`'s paired lines, defined in engine/records/paired.py (below sweep: GroupRecord.compare
gives their facts)."""

from __future__ import annotations

from engine.records.paired import (
    PairedFinal,
    final_metrics,
    paired_finals,
    paired_lines,
    spread,
)

__all__ = [
    "PairedFinal",
    "final_metrics",
    "paired_finals",
    "paired_lines",
    "spread",
]
