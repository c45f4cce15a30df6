"""`grok figure RUN|GROUP... -o FILE`: paper figures (PNG, SVG, PDF) of runs, sweep groups and the paper's claims.

matplotlib is the optional `figures` extra; without it the command says how to install it and exits 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from grok_tui.commands.width import path_line
from grok_tui.errors import user_errors
from grok_tui.options import parse_metrics


def write_paper(runs_dir: str, out_dir: str, fmt: str, log_x: bool, k: int) -> list[tuple[str, Path, Path]]:
    """Every claim figure whose group is under `runs_dir`, into `out_dir`/<claim>.<fmt>: (claim, group, file)."""
    from engine.config import ConfigError
    from engine.records.group import read_group
    from grok_tui.figures.claims import claim_panels, ended_count, missing_claims, paper_groups
    from grok_tui.figures.draw import FORMATS, draw, save

    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)} (got {fmt!r})")
    found = paper_groups(runs_dir)
    if not found:
        raise ConfigError(
            f"{runs_dir}: no sweep group of a claim's preset (grok sweep --preset paper --plan lists them)"
        )
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"-o {out_dir}: cannot create: {e.strerror or e}") from None
    for claim in missing_claims(found):
        print(f"skipped {claim.name}: no group of {' or '.join(claim.presets)} in {runs_dir}", file=sys.stderr)
    written = []
    for claim, gdir in found:
        try:
            group = read_group(gdir)
            _, panels = claim_panels(claim.name, group)
        except ConfigError as e:  # one unreadable or empty group does not stop the others
            print(f"skipped {claim.name}: {e}", file=sys.stderr)
            continue
        done, n = ended_count(gdir)
        if done < n:
            print(f"note: {claim.name} drawn from {gdir.name} with {done} of {n} members ended", file=sys.stderr)
        fig = draw(panels, log_x, k, legend="first", ncols=claim.ncols(group))
        written.append((claim.name, gdir, save(fig, out / f"{claim.name}.{fmt}")))
    return written


app = typer.Typer()  # `grok figure`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def figure(
    paths: Annotated[
        list[str] | None, typer.Argument(help="Run and/or sweep group directories (a group with --claim).")
    ] = None,
    out: Annotated[
        str | None, typer.Option("--out", "-o", help="FILE.png, .svg or .pdf (with --paper: a directory).")
    ] = None,
    metrics: Annotated[str, typer.Option("--metrics", "-m", help="Comma-separated metric columns.")] = (
        "train_acc,val_acc"
    ),
    x: Annotated[str, typer.Option("--x", help="x axis: step or epoch.")] = "step",
    log_x: Annotated[bool, typer.Option("--log-x/--linear-x", help="Log or linear x axis.")] = True,
    k: Annotated[int, typer.Option("--smooth", help="Trailing mean over K evaluations (1 = none).")] = 1,
    claim: Annotated[
        str | None,
        typer.Option("--claim", help="Draw a claim's figure from GROUP (grok figure --paper lists them)."),
    ] = None,
    paper: Annotated[
        str | None, typer.Option("--paper", help="Draw every claim whose group is in RUNS_DIR into -o DIR.")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="With --paper: png, svg or pdf.")] = "png",
) -> None:
    """Draw a paper figure: runs' curves with phase markers, a sweep's mean and spread per arm, or a claim."""
    from engine.config import ConfigError
    from grok_tui.figures.draw import require

    require()  # before anything else: without the extra, say how to install it
    from grok_tui.figures.draw import draw, save

    if out is None:
        raise ConfigError("-o FILE is required (FILE.png, .svg or .pdf; with --paper, a directory)")
    from engine.rundir import check_file

    check_file(out, "-o")
    cols = parse_metrics(metrics, k, x)
    if paper is not None:
        if paths or claim:
            raise ConfigError("--paper RUNS_DIR takes no other paths and no --claim")
        for name, gdir, path in write_paper(paper, out, fmt, log_x, k):
            typer.echo(path_line(f"wrote {name} (from {gdir.name})", path))  # the path whole, never cut
        return
    if not paths:
        raise ConfigError("give run or group directories, --claim NAME GROUP, or --paper RUNS_DIR")
    if claim is not None:
        from engine.records.group import read_group
        from grok_tui.figures.claims import claim_panels, get_claim

        get_claim(claim)
        if len(paths) != 1:
            raise ConfigError("--claim NAME draws one group: give one GROUP directory")
        group = read_group(paths[0])
        c, panels = claim_panels(claim, group)
        fig = draw(panels, log_x, k, legend="first", ncols=c.ncols(group))
    else:
        from engine.rundir import is_group
        from grok_tui.figures.panels import panels_for

        one_group = len(paths) == 1 and is_group(paths[0])  # its panels share their cells: one legend
        fig = draw(panels_for(paths, cols, x), log_x, k, legend="first" if one_group else "each")
    typer.echo(f"wrote {save(fig, out)}")
