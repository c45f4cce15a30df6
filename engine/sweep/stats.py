"""The statistics of sweep reports: quantiles with +inf for members that never generalized, and per-cell summaries.

A member that never reached 95% counts as "more than its budget" (+inf) in the median of
`generalized_step`, so a cell where most seeds failed reads `>N` rather than a flattering median
of the lucky seeds. The grokking delay is taken over the seeds that both memorized and generalized.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from engine.sweep.results import ENDED

INF = math.inf


def num(v: Any) -> float | None:
    """A results.csv cell as a number; None for an empty cell, text, or NaN (never measured)."""
    if v in (None, ""):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def quantile(xs: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default); +inf sorts last."""
    s = sorted(xs)
    if not s:
        return math.nan
    pos = q * (len(s) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if s[hi] == INF:
        return INF if pos > lo or s[lo] == INF else s[lo]
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One cell: seeds, how many generalized, medians and IQRs."""
    n = len(rows)
    ended = [r for r in rows if r.get("status") in ENDED]
    gen = [num(r.get("generalized_step")) for r in ended]
    steps = [g if g is not None else INF for g in gen]
    delays = [d for d in (num(r.get("grokking_delay")) for r in ended) if d is not None]
    vals = [v for v in (num(r.get("final_val_acc")) for r in ended) if v is not None]
    budget = max((num(r.get("max_steps")) or 0 for r in rows), default=0)
    statuses: dict[str, int] = {}
    for r in rows:
        st = r.get("status") or "missing"
        statuses[st] = statuses.get(st, 0) + 1
    return {
        "n": n,
        "ended": len(ended),
        "generalized": sum(g is not None for g in gen),
        "frac_generalized": (sum(g is not None for g in gen) / len(ended)) if ended else math.nan,
        "gen_median": quantile(steps, 0.5),
        "gen_q1": quantile(steps, 0.25),
        "gen_q3": quantile(steps, 0.75),
        "delay_median": quantile(delays, 0.5),
        "delay_q1": quantile(delays, 0.25),
        "delay_q3": quantile(delays, 0.75),
        "final_val_acc": quantile(vals, 0.5),
        "budget": budget,
        "status": ", ".join(f"{v} {k}" for k, v in sorted(statuses.items()) if k != "finished"),
    }


def _value(r: dict[str, Any], key: str) -> str:
    return str(r.get(key, ""))


def cells(rows: Iterable[dict[str, Any]], keys: list[str]) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """Rows grouped by their values of `keys` (as text), in order of first appearance."""
    out: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(tuple(_value(r, k) for k in keys), []).append(r)
    return out
