"""`grok show RUN_DIR`: the summary and the last metrics of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grok_tui.errors import fail, user_errors


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def show(
        run_dir: Annotated[str, typer.Argument(help="A run directory.")],
        last: Annotated[int, typer.Option("--last", "-n", help="How many metric rows to show.")] = 5,
    ) -> None:
        """Print a run's summary and its last metric rows."""
        from engine.rundir import read_config, read_csv, read_summary
        from grok_tui.commands.run import format_summary

        d = Path(run_dir)
        if not (d / "config.json").exists():
            fail(f"{d}: not a run directory (no config.json)")
        cfg = read_config(d)
        summary = read_summary(d)
        typer.echo(f"{d}  preset {cfg.preset or '-'}  seed {cfg.train.seed}  device {summary.get('device', '?')}")
        typer.echo(format_summary(summary))
        rows = read_csv(d / "metrics.csv")[-last:]
        if rows:
            cols = ["step", "train_loss", "train_acc", "val_loss", "val_acc", "lr_ratio"]
            cols += [c for c in rows[0] if c.startswith(("hess_", "rank_", "sigma_"))]
            typer.echo("\n" + "  ".join(f"{c:>11}" for c in cols))
            for r in rows:
                cells = []
                for c in cols:
                    v = r.get(c, "")
                    try:
                        f = float(v)
                        cells.append(f"{int(f):>11}" if c == "step" else f"{f:>11.4g}")
                    except ValueError:
                        cells.append(f"{v:>11}")
                typer.echo("  ".join(cells))
