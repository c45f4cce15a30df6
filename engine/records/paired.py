"""Members' final values (`member_finals`), and `grok report`'s paired lines: each arm (or swept value)
against its baseline on the same seeds.

A final value's paired difference with its spread (the range below 8 seeds, a 95% t-interval from
8), sign-test p and Wilcoxon p; steps to 95% val the same way, with the ratio; and over several cells
an arm's pooled ratio. A member that never reached 95% counts at its budget, and the line says which
side that bounds. The statistics are engine/records/stats.py's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.config import ConfigError
from engine.records.group_dir import Group
from engine.records.results import ENDED
from engine.records.stats import RANGE, Spread, cells, paired, pooled_interval, seed_interval
from engine.rundir import read_metrics
from engine.train.phases import GENERALIZED

DEFAULT_TAIL = 5  # `grok report --tail`: evaluations averaged into a member's final value
DEFAULT_FINAL_METRICS = ("val_acc",)  # plus any other val_acc_* column the members logged (rare, absent tokens)
PEAK = "max:"  # `--metrics max:train_loss`: a member's largest value over its run (Fig. 5: is large c unstable?)


def final_metrics(finals: dict[str, dict[str, float]]) -> list[str]:
    """The metrics the members' final values hold, in the order first seen."""
    return list(dict.fromkeys(k for f in finals.values() for k in f))


def tail_mean(values: list[float], tail: int) -> float | None:
    """The mean of the last `tail` finite values (a probe column is NaN where it was not due); None if none."""
    vals = [v for v in values if math.isfinite(v)][-tail:]
    return sum(vals) / len(vals) if vals else None


def peak(values: list[float]) -> float | None:
    """The largest finite value (a probe column is NaN where it was not due); None if none."""
    vals = [v for v in values if math.isfinite(v)]
    return max(vals) if vals else None


def member_finals(
    group: Group, metrics: list[str] | None = None, tail: int = DEFAULT_TAIL
) -> dict[str, dict[str, float]]:
    """Member id -> {metric: its mean over the member's last `tail` evaluations}, for members that ended.

    `metrics` None: val_acc and every other val_acc_* column the members logged; `max:COL` is COL's
    largest finite value over all the member's evaluations. metrics.csv is read with rundir's reader,
    which drops a line torn by a kill.
    """
    res = group.results()
    ended = [m for m in group.members if m.id in res and res[m.id].ended]
    curves = {m.id: read_metrics(group.member_dir(m)) for m in ended}
    seen = {k for rows in curves.values() for k in (rows[0] if rows else {})}
    if metrics is None:
        metrics = [*DEFAULT_FINAL_METRICS, *sorted(k for k in seen if k.startswith("val_acc_"))]
    elif seen and (unknown := [k for k in metrics if k.removeprefix(PEAK) not in seen]):
        have = ", ".join(sorted(k for k in seen if k not in ("step", "epoch")))
        raise ConfigError(f"{group.dir}: no member logged {', '.join(unknown)}; have {have}")
    out: dict[str, dict[str, float]] = {}
    for mid, rows in curves.items():
        out[mid] = {}
        for k in metrics:
            col = k.removeprefix(PEAK)
            values = [r.get(col, math.nan) for r in rows]
            v = peak(values) if k.startswith(PEAK) else tail_mean(values, tail)
            if v is not None:
                out[mid][k] = v
    return out


def paired_dimension(group: Group, baseline: str | None = None) -> tuple[str, str] | None:
    """The dimension whose values are paired by seed, and its baseline value: the arms against
    `baseline` if given, else the `compare` arm (else the first arm); without arms, the first swept
    grid key against `baseline` or its first value."""
    dim, values = "", []
    if group.spec.arms:
        dim, values = "arm", list(group.spec.arms)
        default = group.spec.compare or values[0]
    else:
        for k, vals in group.spec.grid.items():
            if len(vals) > 1:
                dim, values = k, [str(v) for v in vals]
                default = values[0]
                break
    if not dim:
        if baseline is not None:
            raise ConfigError(f"--baseline {baseline}: this group sweeps no arm or value to pair against it")
        return None
    if baseline is None:
        return dim, default
    if baseline not in values:
        raise ConfigError(f"--baseline {baseline}: not a value of {dim} in this group; values: {', '.join(values)}")
    return dim, baseline


@dataclass(frozen=True)
class PairedFinal:
    """One metric's final values in a cell against the baseline cell's, paired by seed: a report line's facts."""

    metric: str
    label: str  # the value compared: an arm ("adamlr"), or a grid value ("op=mul")
    baseline: str  # the value it is compared against, written the same way
    context: tuple[tuple[str, str], ...]  # the cell's other swept keys and their values
    diff: Spread  # x − baseline over the paired seeds: the mean and its spread (`seed_interval`)
    n: int  # seeds in both cells
    wins: int  # seeds where x is higher
    sign_p: float
    wilcoxon_p: float

    def text(self) -> str:
        """The line `grok report` prints for it."""
        where = _where(self.context)
        return (
            f"{self.metric}: {self.label} - {self.baseline} = {spread(self.diff, '+.3f')}, {self.wins}/{self.n} seeds "
            f"higher, sign p {_p(self.sign_p)}, Wilcoxon p {_p(self.wilcoxon_p)} (n={self.n}){where}"
        )


def _where(context: tuple[tuple[str, str], ...]) -> str:
    """A line's cell: " [op=mul]" for each swept key and value of its context."""
    return "".join(f" [{k.split('.')[-1]}={v}]" for k, v in context)


def _pairs(
    group: Group, rows: Sequence[Mapping[str, Any]], baseline: str | None
) -> Iterator[tuple[tuple[tuple[str, str], ...], str, str, list[Any], list[Any]]]:
    """Each cell of a value of the paired dimension with its baseline cell: (context, label, baseline label,
    its rows, the baseline's rows), in the report's order."""
    pd = paired_dimension(group, baseline)
    if pd is None:
        return
    dim, base = pd
    ctx_keys = [
        k for k in ([] if dim == "arm" else (["arm"] if group.spec.arms else [])) + list(group.spec.grid) if k != dim
    ]
    by = cells(rows, [*ctx_keys, dim])
    for key, rs in by.items():
        *ctx, val = key
        if val == base:
            continue
        label = val if dim == "arm" else f"{dim.split('.')[-1]}={val}"
        base_label = base if dim == "arm" else f"{dim.split('.')[-1]}={base}"
        yield tuple(zip(ctx_keys, ctx, strict=True)), label, base_label, rs, by.get((*ctx, base), [])


def paired_final(
    metric: str,
    label: str,
    base_label: str,
    context: tuple[tuple[str, str], ...],
    mine: dict[Any, float],
    theirs: dict[Any, float],
) -> PairedFinal | None:
    """`metric`'s seeds of `mine` against `theirs` ({seed: final value}), paired by seed; None for no shared seed."""
    seeds = [s for s in mine if s in theirs]
    if not seeds:
        return None
    p = paired([mine[s] for s in seeds], [theirs[s] for s in seeds])
    d = seed_interval([mine[s] - theirs[s] for s in seeds])
    return PairedFinal(metric, label, base_label, context, d, p["n"], p["wins"], p["sign_p"], p["wilcoxon_p"])


def paired_finals(
    group: Group,
    rows: Sequence[Mapping[str, Any]],
    finals: dict[str, dict[str, float]],
    metric: str,
    baseline: str | None = None,
) -> list[PairedFinal]:
    """`metric`'s paired comparison in every cell, as `paired_lines` prints them (GroupRecord.compare)."""
    out = []
    for context, label, base_label, rs, base_rows in _pairs(group, rows, baseline):
        mine = {r["seed"]: finals[r["member"]][metric] for r in rs if metric in finals.get(r["member"], {})}
        theirs = {r["seed"]: finals[r["member"]][metric] for r in base_rows if metric in finals.get(r["member"], {})}
        if (pf := paired_final(metric, label, base_label, context, mine, theirs)) is not None:
            out.append(pf)
    return out


def paired_lines(
    group: Group,
    rows: Sequence[Mapping[str, Any]],
    finals: dict[str, dict[str, float]],
    tail: int,
    baseline: str | None = None,
) -> list[str]:
    """Each value of the paired dimension against its baseline, per metric and context, paired by seed.

    E.g. "val_acc: adamlr - adam = +0.042 (range +0.011 to +0.071), 5/5 seeds higher, sign p 0.0625,
    Wilcoxon p 0.0625 (n=5)" (`PairedFinal.text`), preceded by the same for steps to 95% val
    (`_paired_steps_line`). Only seeds present in both cells count.
    """
    metrics = final_metrics(finals)
    if not metrics:
        return []
    lines: list[str] = []
    pooled: dict[tuple[str, str], list[StepsPairs]] = {}  # (arm, baseline) -> each cell's paired seeds
    for context, label, base_label, rs, base_rows in _pairs(group, rows, baseline):
        where = _where(context)
        if steps := _paired_steps_line(rs, base_rows, f"{label} - {base_label}"):
            lines.append(steps[0] + where)
            pooled.setdefault((label, base_label), []).append(steps[1])
        for k in metrics:
            mine = {r["seed"]: finals[r["member"]][k] for r in rs if k in finals.get(r["member"], {})}
            theirs = {r["seed"]: finals[r["member"]][k] for r in base_rows if k in finals.get(r["member"], {})}
            if (pf := paired_final(k, label, base_label, context, mine, theirs)) is not None:
                lines.append(pf.text())
    for (label, base_label), per_cell in pooled.items():
        logs = [v for c in per_cell for v in c.logs]
        if len(per_cell) > 1 and logs:  # over every cell (task, batch, ...): the arm's pooled ratio
            n_out = sum(c.unreached for c in per_cell)
            rel = _relation(any(c.mine_censored for c in per_cell), any(c.base_censored for c in per_cell))
            sp = pooled_interval([[v for v, _ in c.logs] for c in per_cell])
            lines.append(
                f"steps to {GENERALIZED} val: {label} / {base_label}, {len(per_cell)} cells pooled {rel} "
                f"{_ratio(sp)}, {sum(f for _, f in logs)}/{len(logs)} seeds fewer{_bound(n_out, rel, ' (', ')')}"
            )
    return lines


@dataclass
class StepsPairs:
    """One cell's seeds paired against the baseline's: (log steps ratio, fewer) each, and which side is censored."""

    logs: list[tuple[float, bool]]
    unreached: int  # members counted at their budget, over both arms
    mine_censored: bool
    base_censored: bool


def spread(sp: Spread, f: str, unit: str = "") -> str:
    """A Spread as text: "0.842 (range 0.790 to 0.910)" below 8 seeds, "0.842 [95% t-interval 0.80, 0.88]" from 8."""
    if sp.n == 0:
        return "-"
    if sp.kind == RANGE:
        return f"{sp.mean:{f}}{unit} (range {sp.lo:{f}} to {sp.hi:{f}})"
    return f"{sp.mean:{f}}{unit} [{sp.kind} {sp.lo:{f}}, {sp.hi:{f}}]"


def _ratio(sp: Spread) -> str:
    """A Spread of log steps ratios as a ratio: the geometric mean over paired seeds with the spread
    exponentiated, e.g. "0.55× (range 0.40 to 0.71)" (a ratio; a difference of steps across tasks of
    unequal pace is not one)."""
    return spread(Spread(math.exp(sp.mean), math.exp(sp.lo), math.exp(sp.hi), sp.n, sp.kind), ".2f", "×")


def _relation(mine_censored: bool, base_censored: bool) -> str:
    """How a shown x - baseline (or x / baseline) relates to the true one when unreached members count at
    their budget: the budget under-states x's steps (so the truth is >=), or the baseline's (<=), or both."""
    if mine_censored and base_censored:
        return "≈"
    return "≥" if mine_censored else "≤" if base_censored else "="


def _bound(unreached: int, rel: str, open_: str = "; ", close: str = "") -> str:
    if not unreached:
        return ""
    what = "so a bound" if rel in "≥≤" else "in both arms, so not even a bound"
    return f"{open_}{unreached} unreached counted at the budget, {what}{close}"


def _steps_by_seed(rows: Sequence[Mapping[str, Any]]) -> dict[Any, tuple[float, bool]]:
    """Seed -> (steps to 95% val, reached): an ended member that never reached it counts at its budget."""
    out: dict[Any, tuple[float, bool]] = {}
    for r in rows:
        if r.get("status") not in ENDED:
            continue
        g, budget = r.get("generalized_step"), r.get("max_steps")
        if g is not None or budget is not None:
            out[r["seed"]] = (float(g), True) if g is not None else (float(budget or 0), False)
    return out


def _paired_steps_line(
    rs: Sequence[Mapping[str, Any]], base_rows: Sequence[Mapping[str, Any]], label: str
) -> tuple[str, StepsPairs] | None:
    """Steps to 95% val, x - baseline paired by seed, e.g. "steps to 95% val: small_init - default = -290
    (range -450 to -130), 8/10 seeds fewer, ..., ratio = 0.71× (range 0.60 to 0.84)", and the cell's
    paired seeds for the pooled ratio. "≥"/"≤" replaces "=" where a member that never reached 95% is
    counted at its budget. None when neither cell has a seed that reached it."""
    mine, theirs = _steps_by_seed(rs), _steps_by_seed(base_rows)
    seeds = [s for s in mine if s in theirs]
    if not any(mine[s][1] or theirs[s][1] for s in seeds):
        return None
    p = paired([mine[s][0] for s in seeds], [theirs[s][0] for s in seeds])
    d = seed_interval([mine[s][0] - theirs[s][0] for s in seeds])
    fewer = sum(mine[s][0] < theirs[s][0] for s in seeds)
    unreached = sum((not mine[s][1]) + (not theirs[s][1]) for s in seeds)
    rel = _relation(any(not mine[s][1] for s in seeds), any(not theirs[s][1] for s in seeds))
    logs = [
        (math.log(mine[s][0] / theirs[s][0]), mine[s][0] < theirs[s][0]) for s in seeds if mine[s][0] > 0 < theirs[s][0]
    ]
    ratio = f", ratio {rel} {_ratio(seed_interval([v for v, _ in logs]))}" if logs else ""
    line = (
        f"steps to {GENERALIZED} val: {label} {rel} {spread(d, '+.0f')}, {fewer}/{p['n']} seeds fewer, "
        f"sign p {_p(p['sign_p'])}, Wilcoxon p {_p(p['wilcoxon_p'])} (n={p['n']}{_bound(unreached, rel)}){ratio}"
    )
    pairs = StepsPairs(logs, unreached, rel in "≥≈", rel in "≤≈")
    return line, pairs


def _p(x: float) -> str:
    return "-" if x != x else f"{x:.3g}"
