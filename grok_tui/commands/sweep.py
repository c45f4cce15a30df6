"""`grok sweep`: every member of a sweep preset (arms × grid × seeds) as run directories in one group."""

from __future__ import annotations

from typing import Annotated

import typer

from grok_tui import options as o
from grok_tui.commands.sweep_group import execute, new_group
from grok_tui.commands.width import wrap
from grok_tui.errors import fail, user_errors


def register(app: typer.Typer) -> None:
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
            bool, typer.Option("--plan", help="Print members, summed step budget and recorded wall time; run nothing.")
        ] = False,
    ) -> None:
        """Run a sweep preset's grid over several seeds in parallel, then print its report.

        `--preset paper` runs every claim's sweep in turn into one paper directory (`--plan` lists them
        with their budget); `--resume PAPER_DIR` goes on where it stopped."""
        from engine.claims.paper import PAPER
        from engine.config import ConfigError
        from engine.sweep.spec import Group
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
            table = plan_table(names)
            typer.echo(wrap(table, indent=table.index("wall time")))
            raise typer.Exit(0)
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
            from engine.rundir.dirs import is_paper_dir

            if is_paper_dir(resume):
                raise typer.Exit(resume_paper(resume, workers, backend, address, quiet))
            group = Group.open(resume)
        else:
            group = new_group(opts, seeds, parents)
        raise typer.Exit(execute(group, workers, backend, address, quiet))


def plan_table(names: tuple[str, ...] | None) -> str:
    """The sweeps of `names` (default: the paper's), their size, budget and recorded wall time."""
    from engine.claims.paper import plan

    rows = plan(names)
    w = max([len(r.preset) for r in rows] + [20])  # the longest name keeps the columns aligned
    lines = [f"{'preset':<{w}} {'members':>7} {'budget steps':>13}  wall time recorded in the preset"]
    for r in rows:
        lines.append(f"{r.preset:<{w}} {r.members:>7} {r.steps:>13,}  {r.wall_time or '-'}")
    known = [r.minutes for r in rows if r.minutes is not None]
    lines.append(  # to 0.1 min, as each preset records its own
        f"{'total':<{w}} {sum(r.members for r in rows):>7} {sum(r.steps for r in rows):>13,}  "
        f"{sum(known):.1f} min summed over the {len(known)} of {len(rows)} presets that record one"
    )
    return "\n".join(lines)
