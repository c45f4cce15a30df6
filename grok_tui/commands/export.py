"""`grok export RUN_DIR... [-o FILE|-]`: one tidy CSV of the given runs."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from grok_tui.errors import user_errors


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def export(
        run_dirs: Annotated[list[str], typer.Argument(help="Run directories (or a sweep group directory).")],
        out: Annotated[str, typer.Option("--out", "-o", help="Output CSV file, or - for stdout.")] = "-",
        metrics: Annotated[
            str | None, typer.Option("--metrics", "-m", help="Comma-separated metric columns (default: all).")
        ] = None,
        tokens: Annotated[bool, typer.Option("--tokens", help="Export the per-token table instead.")] = False,
    ) -> None:
        """Export metrics (or per-token counts) of runs as one CSV with run, preset and seed columns."""
        from pathlib import Path

        from engine.config import ConfigError
        from engine.export import export_runs

        dirs: list[Path] = []
        for d in map(Path, run_dirs):
            if (d / "config.json").exists():
                dirs.append(d)
            elif d.is_dir() and any((c / "config.json").exists() for c in d.iterdir() if c.is_dir()):
                dirs.extend(sorted(c for c in d.iterdir() if (c / "config.json").exists()))
            else:
                raise ConfigError(f"{d}: not a run directory (no config.json)")
        cols = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
        n = export_runs(dirs, out, cols, tokens)
        if out != "-":
            print(f"wrote {n} rows from {len(dirs)} run(s) to {out}", file=sys.stderr)
