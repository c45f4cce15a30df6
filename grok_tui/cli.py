"""The `grok` command line. Commands import torch only when they train, so --help stays fast."""

from __future__ import annotations

import typer

from grok_tui.commands import bench, export, presets, report, run, show, split, sweep, tui

app = typer.Typer(
    name="grok",
    help="A terminal lab for grokking: train, watch, sweep and export modular-arithmetic runs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
for module in (run, tui, sweep, report, presets, show, export, split, bench):
    module.register(app)


def main() -> None:
    app()


def tui_main() -> None:
    """Entry point of `grok-tui`: the same as `grok tui`."""
    from grok_tui.commands import tui

    tui.standalone()
