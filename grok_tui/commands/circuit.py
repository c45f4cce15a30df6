"""`grok circuit DIR...`: the progress-measure and embedding-ring verdicts of runs with the progress probe.

Per task and split: G, circuit formation C, the test loss's fall and the restricted loss's lead over it,
cleanup U and ‖θ‖² over the jump (Nanda et al. 2023); whether the rare tokens join the ring last and where
they sit at the end (§4.2). Each cell is a mean over seeds with its spread: the range below 8 runs, a 95%
t-interval from 8 (engine/sweep/report/circuit.py); the pooled lines follow.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer

from engine.train.phases import CIRCUIT_KEY_SHARE, GENERALIZED_ACC
from grok_tui.commands.width import fit, table, wrap
from grok_tui.errors import user_errors

FORMATS = ("text", "markdown")
# (header, quantity or (rare, other) pair, decimals; "%" = a fraction shown as a percentage)
TABLES: list[list[tuple[str, Any, Any]]] = [
    [
        (f"G: val ≥ {GENERALIZED_ACC:g}", "G", 0),
        ("restricted loss < ln(p)/2", "t_r", 0),
        ("test loss < ln(p)/2", "t_t", 0),
        (f"C: also key share ≥ {CIRCUIT_KEY_SHARE:g}", "C", 0),
        ("lead: test − restricted", "lead", 0),
        ("U: ‖θ‖² falls fastest", "U", 0),
        ("Δ‖θ‖² over the jump", "dw", "%"),
        ("fall rate, jump ÷ before", "rate_ratio", 2),
    ],
    [
        ("rare among last k to join", "last_share", 2),
        ("never joined, rare / other", ("never_rare", "never_common"), 1),
        ("membership at end, rare / other", ("mem_rare", "mem_common"), 2),
        ("ring radius at end, rare / other", ("rad_rare", "rad_common"), 2),
        ("phase error at end (°), rare / other", ("err_rare", "err_common"), 1),
        ("val acc on rare tokens' pairs at G", "val_rare_at_G", 2),
    ],
]


POOLED_LINES = {
    "lead": ("lead: test − restricted", 0),
    "C-M": ("C − M", 0),
    "val_acc_at_C": ("val acc at C", 3),
    "G-C": ("G − C", 0),
    "dw": ("Δ‖θ‖² over the jump", "%"),
    "rate_ratio": ("‖θ‖² fall rate, jump ÷ before", 2),
    "G-U": ("G − U", 0),
}


def _num(x: float, digits: Any) -> str:
    return "-" if math.isnan(x) else f"{x * 100:,.1f}%" if digits == "%" else f"{x:,.{digits}f}"


def spread_words() -> str:
    """What a cell's brackets are, for the headers."""
    from engine.records.stats import MIN_SEEDS_FOR_INTERVAL

    return f"mean (range) below {MIN_SEEDS_FOR_INTERVAL} runs, [95% t-interval] from {MIN_SEEDS_FOR_INTERVAL}"


def ci(stat: tuple[float, float, float, int], digits: Any) -> str:
    """`mean (lo–hi)` (`lo to hi` when lo is negative), the range, below 8 runs; `mean [lo, hi]`, the 95%
    t-interval, from 8; a fraction as a percentage with "%"; "-" when no run measured it."""
    from engine.records.stats import MIN_SEEDS_FOR_INTERVAL, range_text

    m, lo, hi, n = stat
    if n == 0 or math.isnan(m):
        return "-"
    k, d, unit = (100, 1, "%") if digits == "%" else (1, digits, "")
    if n < MIN_SEEDS_FOR_INTERVAL:
        return f"{m * k:,.{d}f} ({range_text(lo * k, hi * k, f',.{d}f')}){unit}"
    return f"{m * k:,.{d}f} [{lo * k:,.{d}f}, {hi * k:,.{d}f}]{unit}"


def tables(cells: dict[tuple[str, str], list[dict[str, Any]]]) -> list[list[list[str]]]:
    """Each table as rows of cells, the header first."""
    from engine.sweep.report.circuit import summary

    out = []
    for spec in TABLES:
        rows = [["task, split", "n", *(h for h, _, _ in spec)]]
        for (op, split), recs in cells.items():
            row = [f"{op}, {split}", str(len(recs))]
            for _, key, digits in spec:
                keys = key if isinstance(key, tuple) else (key,)
                row.append(" / ".join(ci(summary(recs, k), digits) for k in keys))
            rows.append(row)
        out.append(rows)
    return out


def blocks(cells: dict[tuple[str, str], list[dict[str, Any]]]) -> str:
    """The default text: one block per task and split, a quantity per line, each line within 80 columns."""
    made = tables(cells)
    heads = [h for rows in made for h in rows[0][2:]]
    label_w = max(len(h) for h in heads)
    text = []
    for i in range(1, len(made[0])):  # row i of every table is the same task and split
        name, n = made[0][i][0], made[0][i][1]
        values = [v for rows in made for v in rows[i][2:]]
        lines = [f"{name} ({n} run{'' if n == '1' else 's'}; {spread_words()})"]
        lines += [fit(f"  {h:<{label_w}}  {v}") for h, v in zip(heads, values, strict=True)]
        text.append("\n".join(lines))
    return "\n\n".join(text)


def render(rows: list[list[str]], fmt: str) -> str:
    if fmt == "markdown":
        lines = ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join([lines[0], "|" + "---|" * len(rows[0]), *lines[1:]])
    return table(rows)


app = typer.Typer()  # `grok circuit`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def circuit(
    dirs: Annotated[list[str], typer.Argument(help="Run directories and/or sweep group directories.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="text or markdown (tables to paste).")] = "text",
    wide: Annotated[bool, typer.Option("--wide", help="Text as wide tables, a column per quantity.")] = False,
) -> None:
    """Restricted vs test loss, ‖θ‖² over the jump and rare tokens on the ring, per task and split.

    Finished runs with the progress probe (probe.progress_every) are grouped by data.op and split
    (starved when data.starve_k is set); each cell is a mean over seeds with its range below 8 runs, its
    95% t-interval from 8.
    """
    from engine.config import ConfigError
    from engine.sweep.report.circuit import circuit_cells, pooled

    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)} (got {fmt!r})")
    cells = circuit_cells(dirs)
    if not cells:
        raise ConfigError("no finished run among the directories given")
    if fmt == "text" and not wide:
        typer.echo(blocks(cells))
    else:
        typer.echo("\n\n".join(render(t, fmt) for t in tables(cells)))
    n = sum(len(r) for r in cells.values())
    head = f"\nover all {n} runs: {spread_words()};\nsmallest to largest; on the claimed side:"
    typer.echo(head if wide or fmt != "text" else wrap(head))
    for key, line in pooled(cells).items():
        label, digits = POOLED_LINES[key]
        text = f"- {label}: {ci(line['stat'], digits)}, {_num(line['min'], digits)} to {_num(line['max'], digits)}"
        if "side" in line:
            side = {"lead": "> 0", "dw": "< 0", "rate_ratio": "> 1", "G-U": "U before G"}[key]
            text += f"; {side} in {line['side']} of {line['stat'][3]}"
        if "at_or_before" in line:
            text += f", at or before in {line['at_or_before']}"
        typer.echo(text if wide or fmt != "text" else wrap(text, indent=2))  # folded at spaces, never cut
