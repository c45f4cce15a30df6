"""`grok sweep`: every member of a sweep preset (arms × grid × seeds) as run directories in one group."""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from grok_tui import options as o
from grok_tui.commands.signals import StopSignals, say
from grok_tui.errors import fail, user_errors

if TYPE_CHECKING:
    from engine.config import RunConfig
    from engine.sweep.spec import Group, Member, SweepSpec


def plan_group(
    preset: str | None,
    config: str | None,
    sets: list[str],
    seeds: int | None,
    steps: int | None,
    device: str | None = None,
) -> tuple[str, RunConfig, SweepSpec, list[Member]]:
    """Expand the preset's [sweep] table with the command's options; every member is checked, nothing is made."""
    import dataclasses
    from pathlib import Path

    from engine.config import ConfigError, apply_overrides, parse_set
    from engine.presets import load_file, load_preset
    from engine.sweep.spec import check_sets, expand, parse_sweep

    if preset and config:
        raise ConfigError("give either --preset or --config, not both")
    if not preset and not config:
        raise ConfigError("give --preset NAME (sweep presets are marked `sweep` in `grok presets`) or --resume DIR")
    p = load_preset(preset) if preset else load_file(Path(str(config)))
    where = str(p.path)
    if not p.is_sweep:
        raise ConfigError(f"preset {p.name!r} has no [sweep] table; run it with `grok run --preset {p.name}`")
    spec = parse_sweep(p.sweep, where)
    if seeds is not None:
        if seeds < 1:
            raise ConfigError(f"--seeds must be >= 1 (got {seeds})")
        spec = dataclasses.replace(spec, seeds=tuple(range(seeds)))
    over: dict[str, Any] = parse_set(sets)
    if steps is not None:
        over["train.max_steps"] = steps
    if device is not None:
        over["train.device"] = device
    check_sets(spec, over)
    base = apply_overrides(p.config, over)
    members = expand(base, spec, where)
    return p.name, base, spec, [m for m, _ in members]


def new_group(
    preset: str | None,
    config: str | None,
    sets: list[str],
    seeds: int | None,
    steps: int | None,
    out: str,
    device: str | None = None,
) -> Group:
    """Expand the preset's [sweep] table and create the group directory; every member is checked first."""
    from engine.sweep.spec import Group

    name, base, spec, members = plan_group(preset, config, sets, seeds, steps, device)
    return Group.create(out, name, base, spec, members)


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def sweep(
        preset: o.Preset = None,
        config: o.ConfigFile = None,
        set_: o.Set = None,
        seeds: Annotated[int | None, typer.Option("--seeds", help="Seeds 0..N-1 instead of the preset's.")] = None,
        steps: o.Steps = None,
        device: o.Device = None,
        workers: Annotated[int, typer.Option("--workers", "-w", help="Worker processes; 0 = one per core.")] = 0,
        backend: Annotated[str, typer.Option("--backend", help="local (process pool) or ray.")] = "local",
        address: Annotated[
            str | None, typer.Option("--address", help="Ray cluster address (ray backend), e.g. auto or HOST:6379.")
        ] = None,
        out: o.Out = "runs",
        out_short: o.OutShort = None,
        resume: Annotated[
            str | None,
            typer.Option("--resume", help="Run what is missing or unfinished in GROUP_DIR (or a paper directory)."),
        ] = None,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
        plan_only: Annotated[
            bool, typer.Option("--plan", help="Print members, summed step budget and recorded wall time; run nothing.")
        ] = False,
    ) -> None:
        """Run a sweep preset's grid over several seeds in parallel, then print its report.

        `--preset paper` runs every claim's sweep in turn into one paper directory (`--plan` lists them
        with their budget); `--resume PAPER_DIR` goes on where it stopped."""
        from engine.config import ConfigError
        from engine.paper import PAPER
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
        if plan_only:
            if resume or config:
                raise ConfigError("--plan sizes a preset: give --preset NAME (or paper)")
            typer.echo(plan_table(None if preset == PAPER else (str(preset),) if preset else None))
            raise typer.Exit(0)
        if preset == PAPER and not resume:
            if config:
                raise ConfigError("--preset paper runs the paper's sweep presets; drop --config")
            out_dir = o.out_dir(out, out_short)
            raise typer.Exit(run_paper(set_ or [], seeds, steps, out_dir, device, workers, backend, address, quiet))
        if resume:
            if preset or config or set_ or seeds is not None or steps is not None or device is not None:
                fail("--resume runs a group with its own grid; drop --preset/--config/--set/--seeds/--steps/--device")
            from engine.rundir import is_paper_dir

            if is_paper_dir(resume):
                raise typer.Exit(resume_paper(resume, workers, backend, address, quiet))
            group = Group.open(resume)
        else:
            group = new_group(preset, config, set_ or [], seeds, steps, o.out_dir(out, out_short), device)
        raise typer.Exit(execute(group, workers, backend, address, quiet))


def plan_table(names: tuple[str, ...] | None) -> str:
    """The sweeps of `names` (default: the paper's), their size, budget and recorded wall time."""
    from engine.paper import plan

    rows = plan(names)
    lines = [f"{'preset':<20} {'members':>7} {'budget steps':>13}  wall time recorded in the preset"]
    for r in rows:
        lines.append(f"{r.preset:<20} {r.members:>7} {r.steps:>13,}  {r.wall_time or '-'}")
    known = [r.minutes for r in rows if r.minutes is not None]
    lines.append(
        f"{'total':<20} {sum(r.members for r in rows):>7} {sum(r.steps for r in rows):>13,}  "
        f"{sum(known):.0f} min summed over the {len(known)} of {len(rows)} presets that record one"
    )
    return "\n".join(lines)


def execute(group: Group, workers: int, backend: str, address: str | None, quiet: bool) -> int:
    """Run the group's pending members with progress and Ctrl-C handling; print the report."""
    from engine.sweep.events import MemberEnded
    from engine.sweep.member import has_ended
    from engine.sweep.pool import Sweep
    from engine.sweep.report import render
    from grok_tui.sweep_progress import make_sweep_progress

    sw = Sweep(group, workers=workers, backend=backend, address=address)
    total = len(sw.members)
    adopted = sum(has_ended(group, m) for m in sw.members)  # ended before a sweep process died: not trained
    line = f"sweep {group.dir}: {total - adopted} of {len(group.members)} members to train"
    if adopted:
        line += f", {adopted} already ended (adopted from their run directories)"
    say(f"{line}, {backend} backend")

    def stop_waiting(signum: int) -> None:  # a second Ctrl-C: stop waiting for the members' last rows
        raise KeyboardInterrupt

    progress = make_sweep_progress(group, total, quiet)
    failed = 0
    with StopSignals(lambda signum: sw.stop(), stop_waiting) as stops:
        try:
            for ev in sw.events():
                try:
                    progress.handle(ev)
                except OSError:  # the terminal is gone (SIGHUP): the rows still go to results.csv
                    pass
                if isinstance(ev, MemberEnded) and ev.row.get("status") == "failed":
                    failed += 1
        except KeyboardInterrupt:
            stops.caught.append(signal.SIGINT)
        finally:
            progress.close()
    say("")
    say(render(group))
    say(f"group directory: {group.dir}")
    if stops.caught:
        say(f"interrupted: `grok sweep --resume {group.dir}` runs what is missing")
        return stops.exit_code()  # 130 SIGINT, 143 SIGTERM, 129 SIGHUP, as a shell reports them
    if failed:
        print(f"error: {failed} member(s) failed; see error.txt in their run directories", file=sys.stderr)
        return 1
    return 0
