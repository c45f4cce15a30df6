"""How each claim is read from its kept group: the parts and their states, the headline number, k of n.

Every number the status page and a claim page state in prose comes from here (the named values a
claim's note quotes) or from `grok report`'s tables (engine/sweep/report/tables.py), both computed from
docs/data/. The statistics rule is engine/records/stats.py's: below 8 seeds a mean with its range and
k of n, from 8 the 95% t-interval of the mean.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.claims.verdicts import CONTROL, HOLDS, Outcome, Part
from engine.config import RunConfig
from engine.records.group_dir import Group, Member
from engine.records.results import ResultsRow, cell_number
from engine.records.stats import RANGE, Spread, range_text, seed_interval
from engine.rundir import is_group, read_metrics


@dataclass(frozen=True)
class Reading:
    """A claim read from its kept group."""

    parts: list[Part]
    headline: str  # the status table's headline number with its spread
    k_of_n: str  # the status table's k of n seeds
    seeds_tasks: str  # "10 × 1 (mul)"
    values: dict[str, str] = field(default_factory=dict)  # named numbers a claim's prose quotes


# --- the members of a kept group, as results.csv gives them ------------------------------------------


@dataclass(frozen=True)
class Row:
    """One member's results row, as numbers."""

    member: Member
    status: str
    gen: float | None  # generalized_step: 95% val accuracy (None: not within the budget)
    budget: float
    first: dict[str, float]
    final: dict[str, float]
    raw: ResultsRow


def rows(group: Group) -> list[Row]:
    """The ended members' rows, in member order."""
    res = group.results()
    out = []
    for m in group.members:
        r = res.get(m.id)
        if r is None or not r.ended:
            continue
        first = {k[6:]: v for k, s in r.items() if k.startswith("first_") and (v := cell_number(s)) is not None}
        final = {k[6:]: v for k, s in r.items() if k.startswith("final_") and (v := cell_number(s)) is not None}
        gen = None if r.generalized_step is None else float(r.generalized_step)
        out.append(Row(m, str(r.status), gen, float(r.max_steps or 0), first, final, r))
    return out


def select(rs: Sequence[Row], arm: str | None = None, **values: Any) -> list[Row]:
    """The rows of one arm (None: any) whose grid values equal `values` (keys with '.' as '__')."""
    want = {k.replace("__", "."): v for k, v in values.items()}
    return [
        r
        for r in rs
        if (arm is None or r.member.arm == arm) and all(r.member.values.get(k) == v for k, v in want.items())
    ]


def by_seed(rs: Sequence[Row]) -> dict[int, Row]:
    return {r.member.seed: r for r in rs}


# --- numbers as the pages write them -----------------------------------------------------------------


def steps(x: float) -> str:
    return f"{x:,.0f}"


def signed(x: float, f: str) -> str:
    return f"{x:+{f}}".replace("-", "−")


def spread(xs: Sequence[float], f: str = ".3f", sign: bool = False, pooled: bool = False) -> str:
    """ "0.842 (0.790–0.910, n = 3)" below 8 values (mean and range), "−490 [−691, −289] (95% t-interval,
    n = 10)" from 8 seeds of one cell; `f` a format spec, `sign` a leading + on positive values. `pooled`: the
    values come from more than one cell (tasks, batch sizes, arms), so always the range: a t-interval would
    treat the cells as seeds."""
    sp = seed_interval(xs)
    if pooled and sp.n:
        sp = Spread(sp.mean, min(xs), max(xs), sp.n, RANGE)
    if sp.n == 0:
        return "-"
    fmt: Callable[[float], str] = (lambda v: signed(v, f)) if sign else (lambda v: format(v, f).replace("-", "−"))
    if sp.kind == RANGE:
        lo, hi = fmt(sp.lo), fmt(sp.hi)
        inner = f"{lo} to {hi}" if sp.lo < 0 or sign else f"{lo}–{hi}"  # never "+0.774–+0.877"
        return f"{fmt(sp.mean)} ({inner}, n = {sp.n})" if sp.n > 1 else f"{fmt(sp.mean)} (n = 1)"
    return f"{fmt(sp.mean)} [{fmt(sp.lo)}, {fmt(sp.hi)}] ({sp.kind}, n = {sp.n})"


def median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return math.nan if n == 0 else (s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2)


def geo_ratio(pairs: Sequence[tuple[float, float]]) -> str:
    """Geometric mean of a/b over pairs with its range: "0.61× (0.52–0.73)"."""
    rs = [a / b for a, b in pairs if a > 0 and b > 0]
    if not rs:
        return "-"
    g = math.exp(sum(math.log(r) for r in rs) / len(rs))
    return f"{g:.2f}× ({range_text(min(rs), max(rs), '.2f')}, n = {len(rs)})"


# --- directions per seed ---------------------------------------------------------------------------


def sooner(
    a: Sequence[Row], b: Sequence[Row], tie_agrees: bool = False
) -> tuple[Outcome, list[tuple[float, float]], int]:
    """Does arm `a` reach 95% val in fewer steps than arm `b`, paired by seed? A pair where only `a` reached
    agrees (a bound that decides), where only `b` reached is against, where neither reached cannot tell.
    `tie_agrees`: "no later" (the same evaluation agrees, the steps' grain). Also the (a, b) steps of the
    pairs where both reached, and how many pairs counted a budget."""
    bs = by_seed(b)
    agree: list[bool | None] = []
    opp: list[bool] = []
    both: list[tuple[float, float]] = []
    bounds = 0
    for ra in a:
        rb = bs.get(ra.member.seed)
        if rb is None:
            continue
        x, y = ra.gen, rb.gen
        if x is not None and y is not None:
            agree.append(x <= y if tie_agrees else x < y)
            opp.append(x > y)
            both.append((x, y))
        elif x is not None:
            agree.append(True)
            opp.append(False)
            bounds += 1
        elif y is not None:
            agree.append(False)
            opp.append(True)
            bounds += 1
        else:
            agree.append(None)
            opp.append(False)
    return Outcome(agree, opp), both, bounds


def diffs(a: Sequence[Row], b: Sequence[Row], value: Callable[[Row], float | None]) -> list[float]:
    """value(a) − value(b) per seed, where both have a value."""
    bs = by_seed(b)
    out = []
    for ra in a:
        rb = bs.get(ra.member.seed)
        if rb is None:
            continue
        x, y = value(ra), value(rb)
        if x is not None and y is not None:
            out.append(x - y)
    return out


def direction(xs: Sequence[float], positive: bool = True) -> Outcome:
    """Each value's sign against the claimed one (zero agrees with neither)."""
    return Outcome([(x > 0) if positive else (x < 0) for x in xs], [(x < 0) if positive else (x > 0) for x in xs])


def generalized(rs: Sequence[Row]) -> str:
    return f"{sum(r.gen is not None for r in rs)} of {len(rs)}"


def budget_of(rs: Sequence[Row]) -> str:
    return steps(max((r.budget for r in rs), default=0))


def part(text: str, outcome: Outcome, evidence: str, judged: str = "", role: str = "") -> Part:
    return Part(text, outcome.state, evidence, judged, role)


def holds(parts: Sequence[Part]) -> bool:
    return all(p.state == HOLDS and not p.judged for p in parts if p.role != CONTROL)


# --- contrasts that move one factor alone -----------------------------------------------------------


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out |= _flat(v, f"{prefix}{k}.")
        else:
            out[prefix + k] = v
    return out


def same_but(a: RunConfig, b: RunConfig, keys: Sequence[str]) -> bool:
    """Whether two members' configs are the same but for the dotted `keys` ("data.split"; the preset's name
    and description aside): a contrast's arms differ in its factor alone."""
    skip = {*keys, "preset", "description"}
    ca, cb = _flat(a.to_dict()), _flat(b.to_dict())
    return {k: v for k, v in ca.items() if k not in skip} == {k: v for k, v in cb.items() if k not in skip}


def paired_alone(
    group: Group, a: Sequence[Row], b: Sequence[Row], keys: Sequence[str], b_group: Group | None = None
) -> tuple[list[tuple[Row, Row]], int]:
    """`a` and `b` paired by seed where their configs differ in `keys` alone (`b` from `b_group`, default
    `group`), and how many pairs of the same seed differ in more (a contrast that is not the factor's)."""
    other = b_group or group
    bs = by_seed(b)
    out: list[tuple[Row, Row]] = []
    bad = 0
    for ra in a:
        rb = bs.get(ra.member.seed)
        if rb is None:
            continue
        if same_but(group.config(ra.member), other.config(rb.member), keys):
            out.append((ra, rb))
        else:
            bad += 1
    return out, bad


def beside(group: Group, name: str) -> Group | None:
    """The group kept beside this one as `name` (docs/data/NAME), or None: a baseline another study ran."""
    d = Path(group.dir).parent / name
    return Group.open(d) if is_group(d) and d.resolve() != Path(group.dir).resolve() else None


# --- a group's seeds and tasks -----------------------------------------------------------------------


def n_seeds(group: Group) -> int:
    return len(group.spec.seeds)


def ops_of(group: Group) -> list[str]:
    """The group's tasks: its grid's data.op, or the one its base config trains."""
    return [str(v) for v in group.spec.grid.get("data.op", [group.base.data.op])]


def seeds_by_tasks(group: Group) -> str:
    """The status table's "seeds × tasks": "10 × 2 (add, mul)"."""
    ops = ops_of(group)
    return f"{n_seeds(group)} × {len(ops)} ({', '.join(ops)})"


def column_median(group: Group, row: Row, col: str, upto: float = math.inf, ratio_of: str = "") -> float | None:
    """The median over a member's evaluations (steps <= upto) of `col` (or col / ratio_of)."""
    vals = []
    for r in read_metrics(group.member_dir(row.member)):
        a = r.get(col, math.nan)
        v = a / r.get(ratio_of, math.nan) if ratio_of else a
        if r["step"] <= upto and math.isfinite(v):
            vals.append(v)
    return median(vals) if vals else None
