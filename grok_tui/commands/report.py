"""`grok report GROUP_DIR`: median/IQR tables, fraction generalized and arm ratios of a sweep."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from grok_tui.errors import user_errors


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def report(
        group_dir: Annotated[str, typer.Argument(help="A sweep's group directory (made by `grok sweep`).")],
        fmt: Annotated[
            str, typer.Option("--format", "-f", help="text, markdown (tables to paste) or csv (long form).")
        ] = "text",
        csv: Annotated[str | None, typer.Option("--csv", help="Also write the tables to this CSV file.")] = None,
        plot: Annotated[
            bool, typer.Option("--plot", help="Append val accuracy per arm/cell: mean and min–max band (grok plot).")
        ] = False,
    ) -> None:
        """Print a sweep's report: per swept value, steps to 95% val acc, delay, fraction generalized."""
        from engine.config import ConfigError
        from engine.rundir import clean_block
        from engine.sweep.report import FORMATS, render, write_csv
        from engine.sweep.spec import Group

        if fmt not in FORMATS:
            raise ConfigError(f"--format must be one of {', '.join(FORMATS)} (got {fmt!r})")
        if plot and fmt == "csv":
            raise ConfigError("--plot draws text; it goes with --format text or markdown, not csv")
        group = Group.open(group_dir)
        if fmt == "csv":
            write_csv(group, sys.stdout)
        else:
            typer.echo(clean_block(render(group, fmt)), nl=False)  # arm names come from group.json
        if plot:
            from grok_tui.commands.plot import plot_text, use_color

            colored = use_color() and fmt == "text"  # markdown is for pasting: no escape codes
            chart = plot_text([group_dir], ["val_acc"], color=colored)
            typer.echo("\n```\n" + chart + "\n```" if fmt == "markdown" else "\n" + chart, color=colored)
        if csv:
            try:
                path = write_csv(group, csv)
            except OSError as e:
                raise ConfigError(f"--csv {csv}: cannot write: {e.strerror or e}") from None
            print(f"wrote {path}", file=sys.stderr if fmt == "csv" else sys.stdout)
