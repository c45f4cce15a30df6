"""What Fig. 4's studies share (§4.2, eqs. 3-6): pairs of members one split apart, and their final values.

The studies claim2, token_skew and fig4_epochs read three kept groups: `fig4_sampling` (claim 2: random,
uniform and the paper's skewed split, batch 64, 128 and 512, add and mul), `fig4_token_skew` (ours: random
against token-level skews s = 3, 8, 15, add and mul) and `fig4_epochs` (ours: random against s = 15 at batch
512, 128 and 64 for equal epochs, mul). Every contrast pairs two members of the same seed and task whose
configs differ in the named factor alone (a part fails where they differ in more). A final value is the mean
of a member's last TAIL evaluations; "ends below" is read at each member's own budget."""

from __future__ import annotations

import math
from collections.abc import Sequence

from engine.claims.readings import (
    Row,
    sooner,
)
from engine.claims.verdicts import FAILS, Outcome, Part
from engine.records.group_dir import Group
from engine.rundir import read_metrics

TAIL = 3  # evaluations a final value averages: train.patience, so a member the stop rule ended averages its streak


Pair = tuple[Row, Row]


Finals = dict[str, dict[str, float]]


def _alone(other: int, factor: str) -> list[Part]:
    """A failing part when some pairs differ in more than the factor; none when every pair is clean."""
    return [Part(f"the pairs differ in {factor} alone", FAILS, f"{other} pairs differ in more")] if other else []


def _sooner(pairs: Sequence[Pair]) -> tuple[Outcome, list[tuple[float, float]]]:
    """Does each pair's first member reach 95% val in fewer steps (readings.sooner, pair by pair)?"""
    agree: list[bool | None] = []
    opp: list[bool] = []
    both: list[tuple[float, float]] = []
    for a, b in pairs:
        o, bb, _ = sooner([a], [b])
        agree += list(o.agree)
        opp += list(o.opposite)
        both += bb
    return Outcome(agree, opp), both


def _stopped(r: Row) -> bool:
    """Whether the stop rule ended the member before its budget (val accuracy held at its target)."""
    return r.raw.steps is not None and r.raw.steps < r.budget


def _val(fin: Finals, r: Row, col: str = "val_acc") -> float | None:
    v = fin.get(r.member.id, {}).get(col)
    return v if v is not None and math.isfinite(v) else None


def _below(pairs: Sequence[Pair], fin: Finals) -> tuple[Outcome, list[float]]:
    """Does each pair's first member (a skewed split) end below its second (random)? It agrees when its final
    val is lower and it ran its whole budget (a member the stop rule ended held val at the stop target, no
    lower plateau); opposite when its final val is higher. Also the differences first − second."""
    agree: list[bool | None] = []
    opp: list[bool] = []
    d: list[float] = []
    for s, r in pairs:
        x, y = _val(fin, s), _val(fin, r)
        if x is None or y is None:
            continue
        agree.append(x < y and not _stopped(s))
        opp.append(x > y)
        d.append(x - y)
    return Outcome(agree, opp), d


def _fits(rs: Sequence[Row]) -> Outcome:
    """Each member memorized: train accuracy reached MEMORIZED_ACC (results.csv memorized_step)."""
    return Outcome([r.raw.memorized_step is not None for r in rs], [r.raw.memorized_step is None for r in rs])


def _rise(group: Group, r: Row) -> float | None:
    """val accuracy at the last evaluation less its value at the first evaluation in the last quarter of the
    budget; None for a member the stop rule ended or with fewer than two evaluations there."""
    if _stopped(r):
        return None
    late = [m["val_acc"] for m in read_metrics(group.member_dir(r.member)) if m["step"] >= 0.75 * r.budget]
    late = [v for v in late if math.isfinite(v)]
    return late[-1] - late[0] if len(late) > 1 else None


def _batch(group: Group, r: Row) -> int:
    return group.config(r.member).train.batch_size


def _split(group: Group, r: Row) -> str:
    return group.config(r.member).data.split


def _ops(rs: Sequence[Row]) -> list[str]:
    return list(dict.fromkeys(str(r.member.values.get("data.op", "")) for r in rs))


def _in(group: Group, rs: Sequence[Row], split: str, batch: int | None = None, op: str | None = None) -> list[Row]:
    return [
        r
        for r in rs
        if _split(group, r) == split
        and (batch is None or _batch(group, r) == batch)
        and (op is None or str(r.member.values.get("data.op", "")) == op)
    ]
