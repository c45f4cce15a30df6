"""`grok fork RUN_DIR --at STEP`: go on from a run's checkpoint with changes and interventions (docs/FORK.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grok_tui import options as o
from grok_tui.errors import user_errors

At = Annotated[
    int | None,
    typer.Option("--at", help="The step to fork at: a kept checkpoint's (`grok show` lists them); default the latest."),
]
Intervene = Annotated[
    list[str] | None,
    typer.Option(
        "--intervene",
        "-i",
        help="rescale:TOKENS=ring|median_norm|xK, turn:TOKENS=random|other|memorized, reset:TOKENS, "
        "zero:TOKENS, copy:TOKENS=RUN_DIR[@STEP], freeze:SETS, unfreeze:SETS, only:SETS "
        "(repeatable; TOKENS: targets, rare, absent or ids).",
    ),
]
ForkOut = Annotated[str | None, typer.Option("--out", help="Directory for the fork (default: beside its parent).")]


def fork_lines(run_dir: Path) -> list[str]:
    """`grok show`'s lines on forks: whose fork this run is, its interventions, and its kept checkpoints."""
    from engine.records.run import read_run
    from engine.rundir import clean_text

    rec = read_run(run_dir)
    out = []
    lin = rec.lineage
    if "parent" in lin:
        out.append(f"fork of {clean_text(lin['parent'])} at step {lin.get('fork_step')}")
        if lin.get("optimizer_state"):
            out.append(f"  optimizer state: {clean_text(lin['optimizer_state'])}")
    for e in rec.interventions:
        out.append(clean_text(f"  intervention at {e['step']}: {e['kind']} {e['target']}: {e['detail']}"))
    kept = rec.kept
    if kept:
        total = sum(k.bytes for k in kept) / 1e6
        shown = ", ".join(f"{k.step}" + (f" ({' '.join(k.why)})" if k.why else "") for k in kept)
        out.append(f"kept checkpoints ({len(kept)}, {total:.2f} MB): {shown}")
    return out


app = typer.Typer()  # `grok fork`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def fork(
    run_dir: Annotated[str, typer.Argument(help="The run directory to fork.")],
    at: At = None,
    sets: o.Set = None,
    intervene: Intervene = None,
    out: ForkOut = None,
    steps: o.Steps = None,
    prepare: Annotated[bool, typer.Option("--prepare", help="Write the fork; do not train it.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    log_every: Annotated[int, typer.Option("--log-every", help="Evaluations between plain log lines.")] = 10,
) -> None:
    """Fork a run at a kept step, with --set changes and --intervene interventions, and train the fork."""
    from engine.config import parse_set
    from engine.rundir import lock_holder
    from engine.train.fork import fork_run
    from grok_tui.commands.run import execute
    from grok_tui.commands.signals import say
    from grok_tui.commands.width import path_line

    pid = lock_holder(run_dir)  # a parent still training: the fork takes the checkpoint it has now
    d = fork_run(run_dir, at, parse_set(sets or []), intervene or [], out, steps)
    say(path_line("fork", d))
    if pid is not None:
        from engine.records.run import read_run

        step = read_run(d).lineage.get("fork_step")
        say(f"note: {run_dir} is still training (pid {pid}); forked its checkpoint at step {step}")
    if prepare:
        say(f"train it with:\n  grok run --resume {d}")
        return
    from engine.train.run import Run

    raise typer.Exit(execute(Run.from_checkpoint(d), quiet, log_every))
