"""`grok sweep`: every member of a sweep preset (arms × grid × seeds) as run directories in one group."""

from __future__ import annotations

from typing import Annotated

import typer

from grok_tui import options as o
from grok_tui.commands.sweep_group import execute, new_group
from grok_tui.commands.width import wrap
from grok_tui.errors import fail, user_errors

app = typer.Typer()  # `grok sweep`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
@o.with_run_options(fields=("preset", "config", "sets", "steps", "device", "out", "out_short"))
def sweep(
    opts: o.RunOptions,
    seeds: Annotated[int | None, typer.Option("--seeds", help="Seeds 0..N-1 instead of the preset's.")] = None,
    workers: Annotated[int, typer.Option("--workers", "-w", help="Worker processes; 0 = one per core.")] = 0,
    backend: Annotated[str, typer.Option("--backend", help="local (process pool) or ray.")] = "local",
    address: Annotated[
        str | None, typer.Option("--address", help="Ray cluster address (ray backend), e.g. auto or HOST:6379.")
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option("--resume", help="Run what is missing or unfinished in GROUP_DIR (or a paper directory)."),
    ] = None,
    parents: Annotated[
        str | None,
        typer.Option("--parents", help="A fork study on GROUP_DIR's ended runs: its members link them, untrained."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    plan_only: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Print members, summed step budget and recorded wall time; with --device cuda, the batches "
            "and a predicted wall time on the card. Runs nothing.",
        ),
    ] = False,
    free_gib: Annotated[
        float, typer.Option("--free-gib", help="--plan --device cuda: the card's free memory; 0 = ask the card.")
    ] = 0.0,
) -> None:
    """Run a sweep preset's grid over several seeds in parallel, then print its report.

    `--preset paper` runs every claim's sweep in turn into one paper directory (`--plan` lists them
    with their budget); `--resume PAPER_DIR` goes on where it stopped."""
    from engine.claims.paper import PAPER
    from engine.config import ConfigError
    from engine.records.group_dir import Group
    from grok_tui.commands.sweep_paper import resume_paper, run_paper

    if backend not in ("local", "ray"):
        raise ConfigError(f"--backend must be local or ray (got {backend!r})")
    if workers < 0:
        raise ConfigError(f"--workers must be >= 0 (got {workers})")
    if address and backend != "ray":
        raise ConfigError("--address needs --backend ray")
    if backend == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise ConfigError("--backend ray needs Ray: pip install 'grok-tui[ray]'")
    preset, config = opts.preset, opts.config
    if plan_only:
        if resume or config:
            raise ConfigError("--plan sizes a preset: give --preset NAME (or paper)")
        names = None if preset == PAPER else (str(preset),) if preset else None
        typer.echo(show_plan(names, opts.device or "", free_gib, workers, parents))
        raise typer.Exit(0)
    if free_gib:
        raise ConfigError("--free-gib sizes a card for --plan --device cuda")
    if preset == PAPER and not resume:
        if config:
            raise ConfigError("--preset paper runs the paper's sweep presets; drop --config")
        paper = run_paper(
            opts.sets or [], seeds, opts.steps, opts.out_root, opts.device, workers, backend, address, quiet
        )
        raise typer.Exit(paper)
    if resume:
        if opts.given("preset", "config", "sets", "steps", "device") or seeds is not None or parents:
            fail(
                "--resume runs a group with its own grid and parents; "
                "drop --preset/--config/--set/--seeds/--steps/--device/--parents"
            )
        from engine.rundir import is_paper_dir

        if is_paper_dir(resume):
            raise typer.Exit(resume_paper(resume, workers, backend, address, quiet))
        group = Group.open(resume)
    else:
        group = new_group(opts, seeds, parents)
    raise typer.Exit(execute(group, workers, backend, address, quiet))


def show_plan(names: tuple[str, ...] | None, device: str, free_gib: float, workers: int, parents: str | None) -> str:
    """--plan's text: on a card (--device cuda) its batches and predicted wall time, else what the presets
    record."""
    if device.startswith("cuda"):
        return card_plan(names, device, free_gib, workers, parents)
    table = plan_table(names)
    return wrap(table, indent=table.index("wall time"))


def card_plan(names: tuple[str, ...] | None, device: str, free_gib: float, workers: int, parents: str | None) -> str:
    """The sweeps of `names` (default: the paper's) planned on a card, with the wall time the cost model
    predicts (engine/sweep/predict.py); `parents`: a --parents group, whose runs are adopted, not trained."""
    from engine.claims.paper import PAPER_SWEEPS
    from engine.config import ConfigError
    from engine.records.group_dir import Group
    from engine.sweep.card_memory import free_bytes
    from engine.sweep.pool import default_workers
    from engine.sweep.predict import GIB, predict, render

    if free_gib < 0:
        raise ConfigError(f"--free-gib must be > 0 (got {free_gib})")
    if not free_gib:
        try:
            free_gib = free_bytes(device) / GIB
        except (RuntimeError, AssertionError, ValueError) as e:
            raise ConfigError(f"--plan --device {device}: no such card here ({e}); give --free-gib G") from None
    workers = workers or default_workers()
    parent = str(Group.open(parents).preset) if parents else ""
    rows = predict(names or tuple(n for n, _ in PAPER_SWEEPS), free_gib, workers, parent)
    return render(rows, free_gib, workers)


def plan_table(names: tuple[str, ...] | None) -> str:
    """The sweeps of `names` (default: the paper's), their size, budget and recorded wall time."""
    from engine.claims.paper import duration_text, plan

    rows = plan(names)
    w = max([len(r.preset) for r in rows] + [20])  # the longest name keeps the columns aligned
    lines = [f"{'preset':<{w}} {'members':>7} {'budget steps':>13}  wall time recorded in the preset"]
    for r in rows:
        lines.append(f"{r.preset:<{w}} {r.members:>7} {r.steps:>13,}  {r.wall_time or '-'}")
    known = [r for r in rows if r.minutes is not None]
    # rounded as the coarsest of the rows it sums, and written as they are ("11.8 min", "2 h 10 min")
    rounding = max((r.rounding or 1.0 for r in known), default=1.0)
    total = duration_text(sum(r.minutes or 0.0 for r in known), rounding, any(r.in_hours for r in known))
    lines.append(
        f"{'total':<{w}} {sum(r.members for r in rows):>7} {sum(r.steps for r in rows):>13,}  "
        f"{total} summed over the {len(known)} of {len(rows)} presets that record one"
    )
    return "\n".join(lines)
