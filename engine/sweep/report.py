"""Sweep reports: median and IQR of steps to 95% val acc and of the grokking delay, per swept value.

A member that never reached 95% counts as "more than its budget" (+inf) in the median of
`generalized_step`, so a cell where most seeds failed reads `>N` rather than a flattering median
of the lucky seeds. The grokking delay is taken over the seeds that both memorized and generalized.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.sweep.spec import Group

INF = math.inf


@dataclass
class Table:
    title: str
    keys: list[str]  # the dimension columns
    rows: list[dict[str, Any]] = field(default_factory=list)


def _num(v: Any) -> float | None:
    if v in (None, ""):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


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
    ended = [r for r in rows if r.get("status") in ("finished", "diverged")]
    gen = [_num(r.get("generalized_step")) for r in ended]
    steps = [g if g is not None else INF for g in gen]
    delays = [d for d in (_num(r.get("grokking_delay")) for r in ended) if d is not None]
    vals = [v for v in (_num(r.get("final_val_acc")) for r in ended) if v is not None]
    budget = max((_num(r.get("max_steps")) or 0 for r in rows), default=0)
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
    out: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(tuple(_value(r, k) for k in keys), []).append(r)
    return out


def _probe_table(group: Group, rows: list[dict[str, Any]], dims: list[str]) -> Table | None:
    """Each probe column as "first -> last" measured value, median over seeds."""
    cols = sorted({k[len("final_") :] for r in rows for k in r if k.startswith("final_")})
    cols = [c for c in cols if c not in ("train_acc", "val_acc") and not c.endswith("_iters")]
    if not cols:
        return None
    t = Table("probes, first -> last measured value (median over seeds)", dims)
    for key, rs in cells(rows, dims).items():
        row: dict[str, Any] = dict(zip(dims, key, strict=True))
        for c in cols:
            a = quantile([v for v in (_num(r.get(f"first_{c}")) for r in rs) if v is not None], 0.5)
            b = quantile([v for v in (_num(r.get(f"final_{c}")) for r in rs) if v is not None], 0.5)
            row[c] = f"{a:.3g} -> {b:.3g}"
        t.rows.append(row)
    return t


def build_tables(group: Group) -> tuple[list[Table], list[str]]:
    """The report's tables (all cells, then one per swept dimension) and its comparison lines."""
    rows = [r for r in group.results().values()]
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
    probe = _probe_table(group, rows, dims)
    if probe:
        tables.append(probe)
    from engine.sweep.compare import compare_lines

    return tables, compare_lines(group, rows)


def _steps(x: float, budget: float) -> str:
    if x != x:
        return "-"
    if x == INF:
        return f">{budget:.0f}"
    return f"{x:.0f}"


def _fmt_summary(r: dict[str, Any]) -> dict[str, str]:
    b = r["budget"]
    gen = f"{_steps(r['gen_median'], b)} [{_steps(r['gen_q1'], b)}, {_steps(r['gen_q3'], b)}]"
    dl = r["delay_median"]
    delay = "-" if dl != dl else f"{dl:.0f} [{r['delay_q1']:.0f}, {r['delay_q3']:.0f}]"
    fv = r["final_val_acc"]
    return {
        "generalized": f"{r['generalized']}/{r['ended']}",
        "steps to 95% val: median [IQR]": gen,
        "grokking delay: median [IQR]": delay,
        "final val_acc": "-" if fv != fv else f"{fv:.3f}",
        "not finished": r["status"] or "",
    }


def render_table(t: Table) -> str:
    if t.rows and "n" in t.rows[0]:
        shown = [{**{k: r[k] for k in t.keys}, **_fmt_summary(r)} for r in t.rows]
    else:
        shown = [{k: (f"{v:.4g}" if isinstance(v, float) else str(v)) for k, v in r.items()} for r in t.rows]
    if not shown:
        return f"{t.title}: no results yet\n"
    cols = list(shown[0])
    if all(not r.get("not finished") for r in shown) and "not finished" in cols:
        cols.remove("not finished")
    width = {c: max(len(c), *(len(str(r[c])) for r in shown)) for c in cols}
    lines = [t.title, "  ".join(c.ljust(width[c]) for c in cols), "  ".join("-" * width[c] for c in cols)]
    lines += ["  ".join(str(r[c]).ljust(width[c]) for c in cols) for r in shown]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render(group: Group) -> str:
    tables, compare = build_tables(group)
    head = f"sweep {group.dir.name}: preset {group.preset or '-'}, {len(group.results())}/{len(group.members)} members"
    parts = [head + "\n"] + [render_table(t) for t in tables]
    if compare:
        parts.append("comparison\n" + "\n".join(compare) + "\n")
    return "\n".join(parts)


def write_csv(group: Group, path: str | Path) -> Path:
    """The same tables in long form: one row per table row, a `table` column naming the table."""
    tables, compare = build_tables(group)
    out: list[dict[str, Any]] = []
    for t in tables:
        out += [{"table": t.title, **r} for r in t.rows]
    out += [{"table": "comparison", "text": line} for line in compare]
    cols: list[str] = []
    for r in out:
        cols += [k for k in r if k not in cols]
    p = Path(path)
    with open(p, "w", newline="") as fh:
        w = csv.DictWriter(fh, cols)
        w.writeheader()
        for r in out:
            w.writerow({k: ("" if isinstance(v, float) and v != v else v) for k, v in r.items()})
    return p
