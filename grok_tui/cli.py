"""The `grok` command line. Commands import torch only when they train, so --help stays fast."""

from __future__ import annotations

from typing import Annotated

import typer

from grok_tui.commands import bench, doctor, export, figure, ls, plot, presets, report, run, show, split, sweep, tui

app = typer.Typer(
    name="grok",
    help="A terminal lab for grokking: train, watch, sweep and export modular-arithmetic runs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
for module in (run, tui, sweep, ls, show, plot, report, figure, export, presets, split, bench, doctor):
    module.register(app)


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("grok-tui")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"grok-tui {version()}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True)
    ] = False,
) -> None:
    """A terminal lab for grokking: train, watch, sweep and export modular-arithmetic runs."""


def main() -> None:
    app()


def tui_main() -> None:
    """Entry point of `grok-tui`: the same as `grok tui`."""
    from grok_tui.commands import tui

    tui.standalone()
