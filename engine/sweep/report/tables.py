"""Sweep reports: median and IQR of steps to 95% val acc and of the grokking delay, per swept value.

Also each cell's final values (a metric averaged over a member's last `tail` evaluations) as the
mean over seeds with its spread (the range below 8 seeds, a 95% t-interval from 8), and for arms
run on the same seeds the paired difference with its spread, sign-test p and Wilcoxon p. A line
that counts a member which never reached 95% at its budget says so: "≥" or "≤" for the side the
budget bounds, and "a bound". Each table says where each cell's members stopped (the last step
they logged, against max_steps); the whole report says it once, in its first table, and opens with a
headline: the cells, and in how many of its seeds each reached 95% val. The statistics are
engine/records/stats.py's; the arm ratios engine/sweep/compare.py's.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from engine.config import ConfigError
from engine.records.group_dir import Group
from engine.records.paired import DEFAULT_TAIL, PEAK, final_metrics, paired_lines
from engine.records.paired import member_finals as member_finals  # a member's final values, below sweep
from engine.records.paired import tail_mean as tail_mean
from engine.records.stats import (
    INF,
    RANGE,
    bracketed,
    cells,
    put_spread,
    quantile,
    seed_interval,
    summarize,
)
from engine.sweep.compare import compare_lines
from engine.sweep.report.forks import DEFAULT_METRICS, TARGET_METRICS, intervention_rows
from engine.sweep.report.targets import LEARNED_COLUMN, has_targets, target_rows
from engine.train.phases import GENERALIZED


@dataclass
class Table:
    """One report table: its title, its dimension columns and one summary row per cell."""

    title: str
    keys: list[str]  # the dimension columns
    rows: list[dict[str, Any]] = field(default_factory=list)
    intervals: list[str] = field(default_factory=list)  # columns shown as a Spread from <c>, <c>_lo, <c>_hi, ...
    texts: list[str] = field(default_factory=list)  # columns shown as they are (formatted by their table)


def _probe_table(group: Group, rows: Sequence[Mapping[str, Any]], dims: list[str]) -> Table | None:
    """Each probe column as "first -> last" measured value, median over seeds."""
    cols = sorted({k[len("final_") :] for r in rows for k in r if k.startswith("final_")})
    cols = [c for c in cols if c not in ("train_acc", "val_acc") and not c.endswith("_iters")]
    if not cols:
        return None
    t = Table("probes, first -> last measured value (median over seeds)", dims)
    for key, rs in cells(rows, dims).items():
        row: dict[str, Any] = dict(zip(dims, key, strict=True))
        row["stopped at"] = stopped_at(summarize(rs))
        for c in cols:
            a = quantile([v for v in (r.get(f"first_{c}") for r in rs) if v is not None], 0.5)
            b = quantile([v for v in (r.get(f"final_{c}") for r in rs) if v is not None], 0.5)
            row[c] = f"{a:.3g} -> {b:.3g}"
        t.rows.append(row)
    return t


def _final_table(
    group: Group, rows: Sequence[Mapping[str, Any]], dims: list[str], finals: dict[str, dict[str, float]], tail: int
) -> Table | None:
    """Per cell: each metric's final value, mean over seeds with its spread (stats.seed_interval)."""
    metrics = final_metrics(finals)
    if not metrics:
        return None
    title = (
        f"final value (mean of the last {tail} evaluations): mean over seeds, (min–max) below 8 seeds, "
        "[95% t-interval] from 8"
    )
    if any(k.startswith(PEAK) for k in metrics):
        title += f"; {PEAK}COL is the member's largest COL over its run"
    t = Table(title, dims, intervals=metrics)
    for key, rs in cells(rows, dims).items():
        row: dict[str, Any] = dict(zip(dims, key, strict=True))
        for k in metrics:
            xs = [finals[r["member"]][k] for r in rs if k in finals.get(r["member"], {})]
            put_spread(row, k, seed_interval(xs))
        row["stopped at"] = stopped_at(summarize(rs))
        t.rows.append(row)
    return t


def build_tables(
    group: Group, tail: int = DEFAULT_TAIL, metrics: list[str] | None = None, baseline: str | None = None
) -> tuple[list[Table], list[str]]:
    """The report's tables (all cells, one per swept dimension, final values, probes) and its comparison lines.

    The comparison lines are the arm ratios of steps to 95% (compare.py), then the paired
    differences of final values (`paired_lines`).
    """
    order = {m.id: i for i, m in enumerate(group.members)}  # member order, as grok sweep lists its members
    rows = sorted(group.results().values(), key=lambda r: order.get(r.get("member", ""), len(order)))
    dims = (["arm"] if group.spec.arms else []) + list(group.spec.grid)
    tables = []
    main = Table("every cell" if dims else "all members", dims)
    for key, rs in cells(rows, dims).items():
        main.rows.append({**dict(zip(dims, key, strict=True)), **summarize(rs)})
    tables.append(main)
    if len(dims) > 1:
        for d in dims:
            t = Table(f"by {d} (pooled over the other dimensions)", [d])
            for key, rs in cells(rows, [d]).items():
                t.rows.append({d: key[0], **summarize(rs)})
            tables.append(t)
    finals = member_finals(group, metrics, tail)
    final = _final_table(group, rows, dims, finals, tail)
    if final:
        tables.append(final)
    probe = _probe_table(group, rows, dims)
    if probe:
        tables.append(probe)
    targets = target_rows(group, dims, _target_norms(group, tail)) if has_targets(group) else None
    if targets:
        title = (
            "decoupling targets (engine/sweep/report/targets.py): batch share, draw ratio and target norm "
            f"(last {tail} evaluations) as mean (min–max) n below 8 seeds; learned step: median over a member's targets"
        )
        t = Table(title, dims, intervals=["batch share", "draw ratio", "target norm"], texts=[LEARNED_COLUMN])
        for r in targets:
            r["stopped at"] = stopped_at(summarize(r.pop("_members")))
        t.rows = targets
        tables.append(t)
    if group.spec.forks:
        tables += _interventions_table(group, metrics) + _factorial_table(group)
    tables += _cure_table(group, tail)
    paired = paired_lines(group, rows, finals, tail, baseline)
    return tables, compare_lines(group, rows, baseline) + paired + _tail_note(group, tail)


def _interventions_table(group: Group, metrics: list[str] | None) -> list[Table]:
    """The fork arms against the runs they fork, paired by seed (engine/sweep/report/forks.py): `--metrics`
    (peaks left out), else the targets' accuracy and row norm where the group has targets, else val_acc."""
    chosen = [k for k in metrics or [] if not k.startswith(PEAK)] or list(
        TARGET_METRICS if has_targets(group) else DEFAULT_METRICS
    )
    rows = intervention_rows(group, chosen)
    if not rows:
        return []
    title = (
        "interventions (engine/sweep/report/forks.py): each fork arm against the arm it forks, paired by seed; "
        "before: the parent at the fork step, after: the fork's last evaluation; mean (min–max) n below 8 seeds"
    )
    cols = [f"{k} {part}" for k in chosen for part in ("before", "after", "change")]
    t = Table(title, ["arm", "from"], intervals=cols, texts=[f"{k} higher" for k in chosen])
    for r in rows:
        r["stopped at"] = stopped_at(summarize(r.pop("_members")))
    t.rows = rows
    return [t]


def _factorial_table(group: Group) -> list[Table]:
    """A fork factorial's contrasts (engine/sweep/report/factorial.py), where the group has one."""
    from engine.sweep.report.factorial import DRAWS_APART, MATCH, OUTCOMES, contrast_rows

    rows = contrast_rows(group)
    if not rows:
        return []
    title = (
        "factorial contrasts (engine/sweep/report/factorial.py): two fork arms one factor apart, paired by seed; "
        "draws: a target's realized draws per batch in the fork's own window; decay: its decay step summed "
        "over the window (target_decay_step); b-a: the change of the last "
        f"evaluation; matched: the draws agree within {MATCH:.0%}, or differ {DRAWS_APART:g}-fold where the "
        "factor is the draws; "
        "mean (min–max) n below 8 seeds"
    )
    intervals = ["draws a", "draws b", "decay a", "decay b", *(f"{k} b-a" for k in OUTCOMES)]
    t = Table(
        title,
        ["parent", "factor", "a", "b"],
        intervals=intervals,
        texts=[*(f"{k} higher" for k in OUTCOMES), "matched"],
    )
    t.rows = rows
    return [t]


def _cure_table(group: Group, tail: int) -> list[Table]:
    """Each cure against its own cell (engine/sweep/report/cures.py), where arms are named CELL_CURE."""
    from engine.sweep.report.cures import OUTCOMES, REACHED, cells, cure_metrics, cure_rows

    if not cells(group):
        return []
    rows = cure_rows(group, member_finals(group, cure_metrics(group), tail))
    if not rows:
        return []
    title = (
        "cures (engine/sweep/report/cures.py): each arm CELL_CURE against its cell's arm CELL, paired by seed; "
        f"cell: the untreated arm's value, change: cure − cell (mean of the last {tail} evaluations); "
        "mean (min–max) n below 8 seeds"
    )
    keys = [k for k in OUTCOMES if f"{k} change" in rows[0]]
    t = Table(
        title,
        ["arm"],
        intervals=[c for k in keys for c in (f"{k} cell", f"{k} change")],
        texts=[*(f"{k} higher" for k in keys), REACHED],
    )
    t.rows = rows
    return [t]


def _target_norms(group: Group, tail: int) -> dict[str, dict[str, float]]:
    """Each member's tail mean of target_norm, where the targets probe ran (an older group has none)."""
    try:
        return member_finals(group, ["target_norm"], tail)
    except ConfigError:  # no member logged target_norm
        return {}


def _tail_note(group: Group, tail: int) -> list[str]:
    """A warning when early stopping makes the last `tail` evaluations straddle generalization.

    A member with train.patience = P stops at the P-th evaluation in a row with its train.stop_metric
    column at or above train.target_val_acc (engine/train/phases.py), so with tail > P its final value mixes
    in evaluations from before the jump.
    """
    res = group.results()
    stopped = []
    watched: list[str] = []
    for m in group.members:
        r = res.get(m.id)
        steps, budget = (r.steps, r.max_steps) if r is not None else (None, None)
        if r is not None and r.ended and steps is not None and budget is not None and steps < budget:
            train = group.config(m).train
            if 0 < train.patience < tail:
                stopped.append(train.patience)
                watched += [train.stop_metric] if train.stop_metric not in watched else []
    if not stopped:
        return []
    ps = sorted(set(stopped))
    return [
        f"note: {len(stopped)} member(s) stopped early (train.patience {', '.join(map(str, ps))}): their last "
        f"{tail} evaluations include some before {' or '.join(watched)} reached the stop rule's target; "
        f"--tail {min(ps)} keeps only those after"
    ]


STOPPED = "stopped at"  # the column of where a cell's members stopped (`stopped_at`)


def _cell_name(row: Mapping[str, Any], keys: list[str]) -> str:
    """A cell as the headline names it: its value of each dimension, in the order the headline gives them,
    joined by / (`adam/add`, `random/512/mul`)."""
    return "/".join(str(row[k]) for k in keys) or "all members"


def headline(group: Group, main: Table) -> list[str]:
    """The report's first lines after its title: the cells (how many, along which dimensions, seeds, budget)
    and what each did: the cells that reached 95% val in k of n seeds (n: the cell's ended members), most
    first."""
    sizes = {"arm": len(group.spec.arms)} | {k: len(v) for k, v in group.spec.grid.items()}
    budgets = [float(r["budget"]) for r in main.rows if r.get("budget")]
    budget = f", up to {max(budgets):.0f} steps" if budgets else ""
    if len(main.keys) > 1:  # the dimensions in the order a cell's name gives its values
        cells = f"{len(main.rows)} cells ({'/'.join(main.keys)}: {' × '.join(str(sizes[k]) for k in main.keys)})"
    else:
        cells = f"{len(main.rows)} " + (
            "arms" if main.keys == ["arm"] else f"cells ({main.keys[0]})" if main.keys else "cell"
        )
    lines = [f"{cells}, {len(group.spec.seeds)} seeds each{budget}; reached {GENERALIZED} val in:"]
    by: dict[tuple[int, int], list[str]] = {}
    for r in main.rows:
        by.setdefault((r["generalized"], r["ended"]), []).append(_cell_name(r, main.keys))
    for (k, n), names in sorted(by.items(), key=lambda kv: (-kv[0][0], -kv[0][1])):
        what = f"{k} of {n} seeds" if n else "no seed yet (none ended)"
        lines.append(f"  {what}: {', '.join(names)}")
    return lines


def _steps(x: float, budget: float) -> str:
    if x != x:
        return "-"
    if x == INF:
        return f">{budget:.0f}"
    return f"{x:.0f}"


def stopped_at(r: dict[str, Any]) -> str:
    """Where a cell's members stopped: the last step each logged, against max_steps, e.g. "600 (400-1000) of
    1000" (median, then the range when they differ); "-" when none logged it."""
    lo, med, hi, b = r["stop_min"], r["stop_median"], r["stop_max"], r["budget"]
    if lo != lo:
        return "-"
    where = f"{med:.0f}" if lo == hi else f"{med:.0f} ({lo:.0f}-{hi:.0f})"
    return f"{where} of {b:.0f}" if b else where


def _fmt_summary(r: dict[str, Any]) -> dict[str, str]:
    b = r["budget"]
    gen = f"{_steps(r['gen_median'], b)} [{_steps(r['gen_q1'], b)}, {_steps(r['gen_q3'], b)}]"
    dl = r["delay_median"]
    delay = "-" if dl != dl else f"{dl:.0f} [{r['delay_q1']:.0f}, {r['delay_q3']:.0f}]"
    fv = r["final_val_acc"]
    return {
        "generalized": f"{r['generalized']}/{r['ended']}",
        f"steps to {GENERALIZED} val: median [IQR]": gen,
        "grokking delay: median [IQR]": delay,
        # the last evaluation's val_acc (median over seeds): not the final-value table's mean of the last `tail`
        "last val_acc": "-" if fv != fv else f"{fv:.3f}",
        "stopped at": stopped_at(r),
        "not finished": r["status"] or "",
    }


def _interval(r: dict[str, Any], c: str) -> str:
    """A final value in a table cell (`bracketed`: the range below 8 seeds, the t-interval from 8)."""
    if r[c] != r[c]:
        return "-"
    return bracketed(r[c], r[f"{c}_lo"], r[f"{c}_hi"], r[f"{c}_n"], r[f"{c}_interval"] == RANGE)


FORMATS = ("text", "markdown", "csv")  # `grok report --format`


def _shown(t: Table, stopped: bool = True) -> tuple[list[str], list[dict[str, str]]]:
    """A table's columns and its rows as strings: medians with their IQR, `>N` for unreached; `stopped`
    False leaves out the STOPPED column (the whole report gives it once, in its first table)."""
    if t.intervals:
        shown = [
            {
                **{k: r[k] for k in t.keys},
                **{c: _interval(r, c) for c in t.intervals},
                **{c: r[c] for c in t.texts},
                **({STOPPED: r[STOPPED]} if STOPPED in r else {}),
            }
            for r in t.rows
        ]
    elif t.rows and "n" in t.rows[0]:
        shown = [{**{k: r[k] for k in t.keys}, **_fmt_summary(r)} for r in t.rows]
    else:
        shown = [{k: (f"{v:.4g}" if isinstance(v, float) else str(v)) for k, v in r.items()} for r in t.rows]
    cols = list(shown[0]) if shown else []
    if all(not r.get("not finished") for r in shown) and "not finished" in cols:
        cols.remove("not finished")
    if not stopped and STOPPED in cols:
        cols.remove(STOPPED)
    return cols, shown


def render_table(t: Table, fmt: str = "text", stopped: bool = True) -> str:
    """A table as aligned text (or a Markdown table); a summary row shows medians with their IQR; `stopped`
    False: without the STOPPED column."""
    cols, shown = _shown(t, stopped)
    md = fmt == "markdown"
    if not shown:
        return f"**{t.title}**: no results yet\n" if md else f"{t.title}: no results yet\n"
    if md:
        lines = [f"**{t.title}**", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |" for r in shown]
        return "\n".join(lines) + "\n"
    width = {c: max(len(c), *(len(str(r[c])) for r in shown)) for c in cols}
    lines = [t.title, "  ".join(c.ljust(width[c]) for c in cols), "  ".join("-" * width[c] for c in cols)]
    lines += ["  ".join(str(r[c]).ljust(width[c]) for c in cols) for r in shown]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render(
    group: Group,
    fmt: str = "text",
    tail: int = DEFAULT_TAIL,
    metrics: list[str] | None = None,
    baseline: str | None = None,
) -> str:
    """The whole report as `grok report` and the end of `grok sweep` print it (text or markdown)."""
    tables, compare = build_tables(group, tail, metrics, baseline)
    head = f"sweep {group.dir.name}: preset {group.preset or '-'}, {len(group.results())}/{len(group.members)} members"
    md = fmt == "markdown"
    lines = headline(group, tables[0])
    top = ("### " if md else "") + head + "\n" + ("\n" if md else "")
    top += "\n".join(f"- {line.strip()}" if md and line.startswith(" ") else line for line in lines) + "\n"
    # where each cell stopped is said once, in the first table (every later table has the same cells)
    parts = [top] + [render_table(t, fmt, stopped=i == 0) for i, t in enumerate(tables)]
    if compare:
        lines = [f"- {c}" for c in compare] if md else compare
        parts.append(("**comparison**\n\n" if md else "comparison\n") + "\n".join(lines) + "\n")
    return "\n".join(parts)


def write_csv(
    group: Group,
    path: str | Path | IO[str],
    tail: int = DEFAULT_TAIL,
    metrics: list[str] | None = None,
    baseline: str | None = None,
) -> Path | None:
    """The same tables in long form: one row per table row, a `table` column naming the table.

    `path` is a file name (returned) or an open text stream such as stdout (None returned)."""
    tables, compare = build_tables(group, tail, metrics, baseline)
    out: list[dict[str, Any]] = []
    for t in tables:
        out += [{"table": t.title, **r} for r in t.rows]
    out += [{"table": "comparison", "text": line} for line in compare]
    cols = list(dict.fromkeys(k for r in out for k in r))

    def write(fh: IO[str]) -> None:
        w = csv.DictWriter(fh, cols)
        w.writeheader()
        for r in out:
            w.writerow({k: ("" if isinstance(v, float) and v != v else v) for k, v in r.items()})

    if not isinstance(path, str | Path):
        write(path)
        return None
    p = Path(path)
    with open(p, "w", newline="") as fh:
        write(fh)
    return p
