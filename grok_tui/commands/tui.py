"""`grok tui` and `grok-tui`: the live lab, with the same run options as `grok run`."""

from __future__ import annotations

from typing import Annotated

import typer

from grok_tui import options as o
from grok_tui.errors import user_errors

OpenDir = Annotated[str | None, typer.Option("--open", help="Browse a finished RUN_DIR with the same charts.")]
Compare = Annotated[
    list[str] | None,
    typer.Option("--compare", help="Overlay val accuracy of RUN_DIRs or sweep GROUP_DIRs (repeat, or list after it)."),
]
Extra = Annotated[list[str] | None, typer.Argument(help="More RUN_DIRs for --compare.", show_default=False)]


def tui(
    preset: o.Preset = None,
    config: o.ConfigFile = None,
    set_: o.Set = None,
    seed: o.Seed = None,
    steps: o.Steps = None,
    device: o.Device = None,
    out: o.Out = "runs",
    open_dir: OpenDir = None,
    compare: Compare = None,
    more: Extra = None,
) -> None:
    """Train one run and watch it live; with no preset, pick one. The run directory is a headless run's."""
    from engine.config import ConfigError
    from grok_tui.app import create_app

    if more and not compare:
        raise ConfigError(f"unexpected argument {more[0]!r}; RUN_DIRs go after --compare")
    dirs = [*(compare or []), *(more or [])]
    app = create_app(preset, config, set_, seed, steps, device, out, open_dir, dirs)
    app.run()


def register(app: typer.Typer) -> None:
    app.command("tui")(user_errors(tui))


def standalone() -> None:
    """The `grok-tui` console script: the same command as `grok tui`."""
    cli = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    cli.command(name="grok-tui")(user_errors(tui))
    cli()
