"""`grok report GROUP_DIR`: median/IQR tables, fraction generalized and arm ratios of a sweep."""

from __future__ import annotations

from typing import Annotated

import typer

from grok_tui.errors import user_errors


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def report(
        group_dir: Annotated[str, typer.Argument(help="A sweep's group directory (made by `grok sweep`).")],
        csv: Annotated[str | None, typer.Option("--csv", help="Also write the tables to this CSV file.")] = None,
    ) -> None:
        """Print a sweep's report: per swept value, steps to 95% val acc, delay, fraction generalized."""
        from engine.config import ConfigError
        from engine.sweep.report import render, write_csv
        from engine.sweep.spec import Group

        group = Group.open(group_dir)
        typer.echo(render(group), nl=False)
        if csv:
            try:
                path = write_csv(group, csv)
            except OSError as e:
                raise ConfigError(f"--csv {csv}: cannot write: {e.strerror or e}") from None
            typer.echo(f"wrote {path}")
