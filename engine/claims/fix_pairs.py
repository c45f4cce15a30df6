"""What the fixes' studies share: pairs one factor apart, and the c each member logged.

The studies adaptive (Prop. 4.1, eq. 24) and fixes (the paper's fixes on the token-starved split, ours).
`adaptive` reads fig6_adaptive: each reading of "adaptive" c against plain Adam per task and against the fixed
c = 10, steps to 95% val paired by seed. `fixes` reads skew_fixes_mul and the skew_fixes_add group kept beside
it (docs/data/): each fix's final val accuracy against plain Adam, the two samplers' also against their control
(uniform draws with replacement), paired by seed. A pair is read only where the two members' configs differ in
the factor the contrast names; a pair that differs in more is left out and fails a part of its own."""

from __future__ import annotations

import math
from collections.abc import Sequence

from engine.claims.readings import (
    Row,
    median,
    paired_alone,
)
from engine.claims.verdicts import UNREAD, Part
from engine.records.group_dir import Group
from engine.records.stats import range_text
from engine.rundir import read_metrics


def _pairs(group: Group, a: Sequence[Row], b: Sequence[Row], keys: Sequence[str]) -> tuple[list[Row], list[Row], int]:
    """`a` and `b` paired by seed where the two differ in `keys` alone, and how many pairs differ in more."""
    ps, bad = paired_alone(group, a, b, keys)
    return [x for x, _ in ps], [y for _, y in ps], bad


def _none(text: str, what: str) -> Part:
    """A contrast with no pair to read: every pair differs in more than `what`."""
    return Part(text, UNREAD, f"no pair of seeds differs in {what} alone")


def _mismatch(n: int, what: str) -> Part:
    return Part(f"the arms differ in {what} alone", "fails", f"{n} pairs differ in more; left out of every other part")


C_KEYS = ("optim.lr_ratio", "optim.adaptive", "optim.adaptive_once", "optim.adaptive_every")  # how c is set


def _c_logged(group: Group, rs: Sequence[Row]) -> tuple[dict[str, list[float]], int, int]:
    """From metrics.csv's `lr_ratio` (the c a member trained with) after step 0: each member's first, lowest,
    highest and last c; how many members logged `c_raw` (eq. 24 before the clamp) and how many of them were ever
    clamped."""
    cs: dict[str, list[float]] = {"first": [], "low": [], "high": [], "last": []}
    logged = clamped = 0
    for r in rs:
        evals = [e for e in read_metrics(group.member_dir(r.member)) if e["step"] > 0 and "lr_ratio" in e]
        c = [e["lr_ratio"] for e in evals if math.isfinite(e["lr_ratio"])]
        if c:
            cs["first"].append(c[0])
            cs["low"].append(min(c))
            cs["high"].append(max(c))
            cs["last"].append(c[-1])
        raw = [(e["c_raw"], e["lr_ratio"]) for e in evals if math.isfinite(e.get("c_raw", math.nan))]
        if raw:
            logged += 1
            clamped += any(not math.isclose(x, y, rel_tol=1e-6) for x, y in raw)
    return cs, logged, clamped


def _members(xs: Sequence[float], f: str = ".2f") -> str:
    """Values that are not independent seeds (a seed's c is the same on every task): their median and range."""
    if not xs:
        return "-"
    return f"{median(xs):{f}} ({range_text(min(xs), max(xs), f)}, {len(xs)} members)"
