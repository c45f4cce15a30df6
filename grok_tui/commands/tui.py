"""`grok tui` and `grok-tui`: the live lab, with the same run options as `grok run`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from engine.events import Status
from grok_tui import options as o
from grok_tui.errors import one_line_usage_errors, user_errors
from grok_tui.rundata import clean_text

if TYPE_CHECKING:
    from grok_tui.app import GrokApp

OpenDir = Annotated[str | None, typer.Option("--open", help="Browse a finished RUN_DIR with the same charts.")]
Compare = Annotated[
    list[str] | None,
    typer.Option("--compare", help="Overlay val accuracy of RUN_DIRs or sweep GROUP_DIRs (repeat, or list after it)."),
]
Resume = Annotated[str | None, typer.Option("--resume", help="Continue RUN_DIR from its checkpoint, in the app.")]
Extra = Annotated[list[str] | None, typer.Argument(help="More RUN_DIRs for --compare.", show_default=False)]


@o.with_run_options
def tui(
    opts: o.RunOptions,
    open_dir: OpenDir = None,
    compare: Compare = None,
    resume: Resume = None,
    more: Extra = None,
) -> None:
    """Train one run and watch it live; with no preset, pick one. The run directory is a headless run's."""
    from engine.config import ConfigError
    from grok_tui.app import create_app

    if more and not compare:
        raise ConfigError(f"unexpected argument {more[0]!r}; RUN_DIRs go after --compare")
    dirs = [*(compare or []), *(more or [])]
    if open_dir is None and resume is None and not dirs:  # a run to make: never inside a run or a group
        from engine.rundir.destination import RUN, check_root

        check_root(opts.out_root, RUN)
    app = create_app(opts, open_dir=open_dir, compare=dirs, resume_dir=resume)
    app.run()
    raise typer.Exit(farewell(app))


def farewell(app: GrokApp) -> int:
    """After the app closed: the last run's directory and summary, as `grok run` prints them.

    The exit code is 128 + the signal that closed the app (SIGHUP, SIGTERM, SIGINT), else 0.
    """
    from engine.records.run import read_run
    from grok_tui.commands.run import format_summary, resume_hint
    from grok_tui.commands.signals import say
    from grok_tui.commands.width import path_line

    if app.trained and app.data.run_dir:
        run_dir = Path(app.data.run_dir)
        say(path_line("run directory", clean_text(str(run_dir))))
        rec = read_run(run_dir)
        say(format_summary(rec.summary.fields() or app.data.summary))
        if rec.status == Status.INTERRUPTED:
            say(resume_hint("grok-tui", run_dir))
    return 128 + app.stop_signal if app.stop_signal else 0


app = typer.Typer()  # `grok tui`, added to the `grok` app by grok_tui/cli.py
app.command("tui")(user_errors(tui))


def standalone() -> None:
    """The `grok-tui` console script: the same command as `grok tui`."""
    cli = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    cli.command(name="grok-tui")(user_errors(tui))
    one_line_usage_errors(cli)
