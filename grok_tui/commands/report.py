"""`grok report GROUP_DIR`: median/IQR tables, arm ratios, final values with their spread and paired tests."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from engine.train.phases import GENERALIZED
from grok_tui.commands.width import fold_text, path_line
from grok_tui.errors import user_errors

app = typer.Typer()  # `grok report`, added to the `grok` app by grok_tui/cli.py


@app.command(
    help=f"Print a sweep's report: per swept value, steps to {GENERALIZED} val acc, delay, fraction generalized."
    "\n\nAlso each cell's final values (mean of the last --tail evaluations) as a mean over seeds with its "
    "range below 8 seeds or its 95% t-interval from 8, and per arm against the baseline (same seeds) the paired "
    "difference, its spread, the exact sign-test p and the Wilcoxon signed-rank p; ≥ or ≤ marks a bound."
    "\n\nA paper directory (`grok sweep --preset paper`) "
    "gives each sweep's wall time, CPU seconds and share of the cores kept busy, and the paper's totals."
)
@user_errors
def report(
    group_dir: Annotated[
        str, typer.Argument(help="A sweep's group directory, or a paper directory (made by `grok sweep`).")
    ],
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="text, markdown (tables to paste) or csv (long form).")
    ] = "text",
    csv: Annotated[str | None, typer.Option("--csv", help="Also write the tables to this CSV file.")] = None,
    plot: Annotated[
        bool, typer.Option("--plot", help="Append val accuracy per arm/cell: mean and min–max band (grok plot).")
    ] = False,
    tail: Annotated[
        int, typer.Option("--tail", help="A member's final value: the mean of its last N evaluations.")
    ] = 5,
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics",
            "-m",
            help="Comma-separated final-value columns (default: val_acc, val_acc_*); max:COL is a member's "
            "largest COL over its run (e.g. max:train_loss).",
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="Pair every arm (or swept value) against this one instead of the preset's compare arm, "
            "e.g. a sampler's own control.",
        ),
    ] = None,
    wide: Annotated[bool, typer.Option("--wide", help="Tables and lines unfolded, however wide.")] = False,
    seeds: Annotated[
        str | None,
        typer.Option("--seeds", help="Comma-separated seeds to report, e.g. 0,1: the rest of the group left out."),
    ] = None,
    keep: Annotated[
        str | None,
        typer.Option(
            "--keep",
            help="Write a thin copy of the group into this directory (docs/data/NAME): group.json, results.csv "
            "and kept.json (where it came from) as text, and per member its config, summary and a thinned "
            "metrics.csv packed into members.tar.xz. `grok report`, `grok figure` and `grok export` read it as "
            "a group.",
        ),
    ] = None,
    machine: Annotated[
        str | None,
        typer.Option(
            "--machine",
            help="With --keep: the machine that ran the group, in words for kept.json (default: the cores of "
            "this one for a CPU group, 'a CUDA GPU' for a group whose runs trained on one).",
        ),
    ] = None,
    commit: Annotated[
        str | None,
        typer.Option(
            "--commit",
            help="With --keep: the commit whose code ran the group (default: the one group.json recorded when the "
            "sweep started, else this checkout's last commit before it).",
        ),
    ] = None,
) -> None:
    from engine.config import ConfigError
    from engine.rundir import clean_block, is_paper_dir

    if keep is not None or machine is not None or commit is not None:
        _keep(group_dir, keep, machine, commit)
        return
    if is_paper_dir(group_dir):
        from engine.records.paper import Paper
        from engine.records.paper import render as render_paper
        from engine.rundir import lock_holder

        if fmt != "text" or csv or plot or metrics is not None or baseline is not None or seeds is not None:
            raise ConfigError(
                "a paper directory's report is a text table: drop --format/--csv/--plot/--metrics/--baseline/--seeds"
            )
        text = clean_block(render_paper(Paper.open(group_dir), running=lock_holder(group_dir) is not None))
        typer.echo(text if wide else fold_text(text), nl=False)
        return
    from engine.records.group import read_group
    from engine.sweep.report.tables import FORMATS, render, write_csv
    from grok_tui.options import parse_metrics

    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)} (got {fmt!r})")
    from engine.rundir import check_file

    check_file(csv or "-", "--csv")  # before anything is written (engine/rundir/destination.py)
    if tail < 1:
        raise ConfigError(f"--tail must be >= 1 (got {tail})")
    cols = None if metrics is None else parse_metrics(metrics)
    if plot and fmt == "csv":
        raise ConfigError("--plot draws text; it goes with --format text or markdown, not csv")
    rec = read_group(group_dir)  # the group's record (engine/records/group.py)
    if seeds is not None:
        try:
            chosen = {int(x) for x in seeds.split(",") if x.strip()}
        except ValueError:
            raise ConfigError(f"--seeds: expected comma-separated integers, e.g. 0,1 (got {seeds!r})") from None
        if not chosen or not (chosen & set(rec.spec.seeds)):
            raise ConfigError(f"--seeds: the group's seeds are {', '.join(map(str, rec.spec.seeds))} (got {seeds!r})")
        rec = rec.with_seeds(chosen)
    group = rec.group  # the report is the engine's (engine/sweep/report/tables.py), over the group's record
    if fmt == "csv":
        write_csv(group, sys.stdout, tail, cols, baseline)
    else:
        # arm names come from group.json
        text = clean_block(render(group, fmt, tail, cols, baseline))
        typer.echo(text if wide or fmt != "text" else fold_text(text), nl=False)
    if plot:
        from grok_tui.commands.plot import plot_text, use_color

        colored = use_color() and fmt == "text"  # markdown is for pasting: no escape codes
        chart = plot_text([group_dir], ["val_acc"], color=colored)
        typer.echo("\n```\n" + chart + "\n```" if fmt == "markdown" else "\n" + chart, color=colored)
    if csv:
        try:
            path = write_csv(group, csv, tail, cols, baseline)
        except OSError as e:
            raise ConfigError(f"--csv {csv}: cannot write: {e.strerror or e}") from None
        print(f"wrote {path}", file=sys.stderr if fmt == "csv" else sys.stdout)


def _keep(group_dir: str, dest: str | None, machine: str | None = None, ref: str | None = None) -> None:
    """`grok report GROUP --keep DIR`: the thin copy (engine/rundir/keep.py), stamped with the code's commit."""
    import datetime
    import re
    import subprocess
    from pathlib import Path

    from engine.config import ConfigError

    if dest is None:
        raise ConfigError("--machine and --commit go with --keep DIR")
    from engine.records.group_dir import Group
    from engine.rundir import keep_group

    try:  # the code the sweep ran: as group.json records it, else this checkout's last commit before it started
        doc = Group.open(group_dir).doc
    except ConfigError:
        doc = {}  # keep_group says what is wrong with the directory
    created, recorded = str(doc.get("created", "")), str(doc.get("commit", ""))
    commit = ""
    if ref is None and (m := re.fullmatch(r"([0-9a-f]{7})[0-9a-f]{33}(\+dirty)?", recorded)):
        commit = m.group(1) + (m.group(2) or "")
    here = Path(__file__).resolve().parents[2]
    since = [f"--before={created}"] if created and ref is None else []
    git = ["git", "-C", str(here), "log", "-1", "--format=%h", *since, ref or "HEAD", "--"]
    try:
        if not commit:
            found = subprocess.run(git, capture_output=True, text=True, check=False)
            commit = found.stdout.strip()
    except OSError:
        commit = ""
    if ref is not None and not commit:
        raise ConfigError(f"--commit {ref}: this checkout has no such commit")
    prov = keep_group(
        group_dir,
        dest,
        commit=commit or "unknown",
        machine=machine,
        kept=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    size = sum(f.stat().st_size for f in Path(dest).rglob("*") if f.is_file())
    typer.echo(path_line(f"kept {prov.ended}/{prov.members} members of {prov.group} ({size / 1024:.0f} KB)", dest))
