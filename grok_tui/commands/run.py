"""`grok run`: the headless run, for SSH sessions, tmux and batch jobs."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from engine.events import Status
from grok_tui import options as o
from grok_tui.commands.signals import StopSignals, say
from grok_tui.commands.width import path_line
from grok_tui.errors import EXIT_DIVERGED, user_errors

if TYPE_CHECKING:
    from engine.train.run import Run


def format_summary(summary: dict[str, Any]) -> str:
    """The summary lines `grok run`, `grok show` and `grok-tui` print: a results row's fields, and the speed."""
    from engine.records.results import RESULTS_FIELDS

    parts = []
    for k in [k for k in (*RESULTS_FIELDS, "steps_per_s") if k in summary]:  # a run's summary has no max_steps
        v = summary.get(k)
        if isinstance(v, float):
            v = f"{v:.4g}"
        parts.append(f"  {k:<17} {v if v is not None else '-'}")
    return "\n".join(parts)


def resume_hint(command: str, run_dir: object) -> str:
    """The line every summary of an interrupted run ends with: how to go on from its checkpoint."""
    from engine.rundir import clean_text

    return f"interrupted; resume with:\n  {command} --resume {clean_text(str(run_dir))}"


def execute(run: Run, quiet: bool, log_every: int) -> int:
    """Iterate a Run to its end with progress and signal handling; return the exit code."""
    from engine.train.phases import Phases, early_stop_note
    from grok_tui.progress import make_progress

    progress = make_progress(quiet, log_every)
    with StopSignals(lambda signum: run.stop(Status.INTERRUPTED)) as stops:
        try:
            for ev in run.events():
                progress.handle(ev)
        finally:
            progress.close()
    status = run.status
    say(path_line("run directory", run.dir))
    say(format_summary(run.summary))
    note = early_stop_note(Phases.of(run.summary).early_stop_step, run.cfg.train)
    if note and status == Status.FINISHED:
        say(note)
    if status == Status.INTERRUPTED:
        say(resume_hint("grok run", run.dir))
        return stops.exit_code()
    if status == Status.DIVERGED:
        print(f"error: loss became NaN/inf at step {run.summary.get('steps')}; run diverged", file=sys.stderr)
        return EXIT_DIVERGED
    if status == Status.FAILED and run.fault:  # a full disk: one line, no traceback in error.txt
        print(f"error: {run.fault}", file=sys.stderr)
        return 1
    if status == Status.FAILED:
        print(f"error: run failed: {run.summary.get('error', '')} (see {run.dir}/error.txt)", file=sys.stderr)
        return 1
    return 0


app = typer.Typer()  # `grok run`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
@o.with_run_options
def run(
    opts: o.RunOptions,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue RUN_DIR from its checkpoint.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    log_every: Annotated[int, typer.Option("--log-every", help="Evaluations between plain log lines.")] = 10,
) -> None:
    """Train one run headless and write its run directory."""
    from engine.train.run import Run

    if resume:
        opts.check_resume()
        r = Run.from_checkpoint(resume, max_steps=opts.steps, device=opts.device)
    else:
        r = Run(opts.resolve(), opts.out_root)
    raise typer.Exit(execute(r, quiet, log_every))
