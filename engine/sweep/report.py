"""Sweep reports: median and IQR of steps to 95% val acc and of the grokking delay, per swept value.

The statistics are engine/sweep/stats.py's; the arm comparisons engine/sweep/compare.py's.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from engine.phases import GENERALIZED
from engine.sweep.compare import compare_lines
from engine.sweep.spec import Group
from engine.sweep.stats import INF, cells, num, quantile, summarize


@dataclass
class Table:
    """One report table: its title, its dimension columns and one summary row per cell."""

    title: str
    keys: list[str]  # the dimension columns
    rows: list[dict[str, Any]] = field(default_factory=list)


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
            a = quantile([v for v in (num(r.get(f"first_{c}")) for r in rs) if v is not None], 0.5)
            b = quantile([v for v in (num(r.get(f"final_{c}")) for r in rs) if v is not None], 0.5)
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
        f"steps to {GENERALIZED} val: median [IQR]": gen,
        "grokking delay: median [IQR]": delay,
        "final val_acc": "-" if fv != fv else f"{fv:.3f}",
        "not finished": r["status"] or "",
    }


FORMATS = ("text", "markdown", "csv")  # `grok report --format`


def _shown(t: Table) -> tuple[list[str], list[dict[str, str]]]:
    """A table's columns and its rows as strings: medians with their IQR, `>N` for unreached."""
    if t.rows and "n" in t.rows[0]:
        shown = [{**{k: r[k] for k in t.keys}, **_fmt_summary(r)} for r in t.rows]
    else:
        shown = [{k: (f"{v:.4g}" if isinstance(v, float) else str(v)) for k, v in r.items()} for r in t.rows]
    cols = list(shown[0]) if shown else []
    if all(not r.get("not finished") for r in shown) and "not finished" in cols:
        cols.remove("not finished")
    return cols, shown


def _markdown_table(t: Table) -> str:
    cols, shown = _shown(t)
    if not shown:
        return f"**{t.title}**: no results yet\n"

    def cell(v: object) -> str:
        return str(v).replace("|", "\\|")

    lines = [f"**{t.title}**", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in shown]
    return "\n".join(lines) + "\n"


def render_table(t: Table, fmt: str = "text") -> str:
    """A table as aligned text (or a Markdown table); a summary row shows medians with their IQR."""
    if fmt == "markdown":
        return _markdown_table(t)
    cols, shown = _shown(t)
    if not shown:
        return f"{t.title}: no results yet\n"
    width = {c: max(len(c), *(len(str(r[c])) for r in shown)) for c in cols}
    lines = [t.title, "  ".join(c.ljust(width[c]) for c in cols), "  ".join("-" * width[c] for c in cols)]
    lines += ["  ".join(str(r[c]).ljust(width[c]) for c in cols) for r in shown]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render(group: Group, fmt: str = "text") -> str:
    """The whole report as `grok report` and the end of `grok sweep` print it (text or markdown)."""
    tables, compare = build_tables(group)
    head = f"sweep {group.dir.name}: preset {group.preset or '-'}, {len(group.results())}/{len(group.members)} members"
    md = fmt == "markdown"
    parts = [("### " if md else "") + head + "\n"] + [render_table(t, fmt) for t in tables]
    if compare:
        lines = [f"- {c}" for c in compare] if md else compare
        parts.append(("**comparison**\n\n" if md else "comparison\n") + "\n".join(lines) + "\n")
    return "\n".join(parts)


def write_csv(group: Group, path: str | Path | IO[str]) -> Path | None:
    """The same tables in long form: one row per table row, a `table` column naming the table.

    `path` is a file name (returned) or an open text stream such as stdout (None returned)."""
    tables, compare = build_tables(group)
    out: list[dict[str, Any]] = []
    for t in tables:
        out += [{"table": t.title, **r} for r in t.rows]
    out += [{"table": "comparison", "text": line} for line in compare]
    cols: list[str] = []
    for r in out:
        cols += [k for k in r if k not in cols]

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
