"""`grok export RUN_DIR|GROUP_DIR... [-o FILE|-]`: one tidy CSV of the given runs and sweep members."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from grok_tui import options as o
from grok_tui.errors import user_errors

app = typer.Typer()  # `grok export`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def export(
    run_dirs: Annotated[list[str], typer.Argument(help="Run directories, sweep group directories or folders of runs.")],
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Output file, or - for stdout (default: stdout unless a terminal)."),
    ] = None,
    out_old: Annotated[
        str | None, typer.Option("--out", hidden=True, help="Old spelling of --output (deprecated).")
    ] = None,
    metrics: Annotated[
        str | None, typer.Option("--metrics", "-m", help="Comma-separated metric columns (default: all).")
    ] = None,
    tokens: Annotated[bool, typer.Option("--tokens", help="Export the per-token table instead.")] = False,
    interventions: Annotated[
        bool, typer.Option("--interventions", help="Export forks' interventions (step, kind, target, detail).")
    ] = False,
) -> None:
    """Export metrics (or per-token counts) as one CSV: run, preset, seed and, for sweep members, group, arm,
    member and one column per swept key."""
    from engine.records.export import export_runs, resolve

    if out_old is not None:
        o.deprecated("grok export --out FILE", "-o/--output FILE (--out names a directory everywhere)")
        output = out_old
    from engine.rundir import check_file

    if output is not None:
        check_file(output, "-o")
    sources = resolve(run_dirs)
    cols = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    if output is None and sys.stdout.isatty():  # hundreds of columns of CSV are for a file, not a terminal
        summarize(sources, cols, tokens, interventions)
        return
    output = output or "-"
    n = export_runs(sources, output, cols, tokens, interventions)
    if output != "-":
        print(f"wrote {n} rows from {len(sources)} run(s) to {output}", file=sys.stderr)


def summarize(sources: list[Any], metrics: list[str] | None, tokens: bool, interventions: bool) -> None:
    """What the CSV would hold, in lines that fit the terminal, and how to write it."""
    from engine.records.export import export_rows
    from grok_tui.commands.width import echo

    header, rows = export_rows(sources, metrics, tokens, interventions)
    echo(f"{len(rows)} rows × {len(header)} columns of CSV from {len(sources)} run(s): {', '.join(header)}")
    echo("write them with -o FILE.csv, or -o - to print them here (or pipe: grok export ... | ...)")
