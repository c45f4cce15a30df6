"""`grok show RUN_DIR`: the summary and the last metrics of a run, live, finished or killed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from engine.status import Status
from grok_tui.commands.width import columns, echo, fold, num
from grok_tui.errors import user_errors


def liveness(status: str, pid: int | None, run_dir: Path) -> str | None:
    """One line on who holds the run: a live process, or none and how to go on."""
    if pid is not None:
        return f"live: pid {pid} holds this run ({status})"
    if status == Status.DEAD:
        return f"no process: interrupted or killed; resume with:\n  grok run --resume {run_dir}"
    if status == Status.INTERRUPTED:
        return f"stopped before its end; resume with:\n  grok run --resume {run_dir}"
    if status == Status.PREPARED:
        return f"not trained yet; train it with:\n  grok run --resume {run_dir}"
    return None


app = typer.Typer()  # `grok show`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def show(
    run_dir: Annotated[str, typer.Argument(help="A run directory.")],
    last: Annotated[int, typer.Option("--last", "-n", help="How many metric rows to show.")] = 5,
    wide: Annotated[bool, typer.Option("--wide", help="Every column on one line, however wide.")] = False,
) -> None:
    """Print a run's summary and its last metric rows; on a live run, its progress from the rows."""
    from engine.records.run import read_run
    from engine.rundir import clean_text
    from grok_tui.commands.ls import run_entry
    from grok_tui.commands.run import format_summary

    d = Path(run_dir)
    rec = read_run(d)
    e = run_entry(rec)
    summary = {**rec.summary.fields(), "status": rec.status, "steps": rec.step}
    phase_keys = ("memorized_step", "generalized_step", "grokking_delay", "final_train_acc", "final_val_acc")
    summary.update({k: e[k] for k in (*phase_keys, "best_val_acc", "wall_s")})
    device = clean_text(rec.summary.device or ("- (not trained yet)" if rec.status == Status.PREPARED else "?"))
    about = f"preset {rec.preset or '-'}  seed {rec.config.train.seed}  device {device}"
    head = f"{clean_text(d)}  {about}"
    if wide or len(head) <= columns():
        typer.echo(head)
    else:  # the directory on a line of its own (a fork's name is long), then what it ran
        echo(clean_text(d))
        echo(f"  {about}")
    typer.echo(format_summary(summary))
    note = liveness(rec.status, rec.pid, d)
    if note:
        echo(note, wide)
    stop = rec.stop_note()
    if stop:
        echo(stop, wide)
    from grok_tui.commands.fork import fork_lines

    for line in fork_lines(d):  # a fork's parent and interventions, the kept checkpoints
        echo(line, wide)
    rows = rec.rows[-last:] if last > 0 else []
    if rows:
        cols = ["step", "train_loss", "train_acc", "val_loss", "val_acc", "lr_ratio"]
        cols += [c for c in rows[0] if c.startswith(("hess_", "rank_", "sigma_"))]
        cols = [c for c in cols if c in rows[0]]
        # a probe that did not run at a row's evaluation left NaN there: shown as a blank "–"
        table = [[clean_text(c) for c in cols]]
        table += [[str(int(r[c])) if c == "step" else num(r[c]) for c in cols] for r in rows]
        table = [[c.rjust(max(len(t[i]) for t in table)) for i, c in enumerate(row)] for row in table]
        typer.echo("\n" + ("\n".join("  ".join(row) for row in table) if wide else fold(table)))
