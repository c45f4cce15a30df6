"""A sweep's group as the `grok sweep` commands make and run it: its members planned from a preset
and the command's options, its directory created, its pending members run with progress and Ctrl-C."""

from __future__ import annotations

import contextlib
import signal
import sys
from typing import TYPE_CHECKING

from engine.events import Status
from grok_tui.commands.signals import StopSignals, say
from grok_tui.commands.width import fold_text, path_line, wrap

if TYPE_CHECKING:
    from engine.config import RunConfig
    from engine.records.group_dir import Group, Member, SweepSpec
    from grok_tui.options import RunOptions


SWEEP_SOURCE = "give --preset NAME (sweep presets are marked `sweep` in `grok presets`) or --resume DIR"


def plan_group(opts: RunOptions, seeds: int | None) -> tuple[str, RunConfig, SweepSpec, list[Member]]:
    """Expand the preset's [sweep] table with the command's options; every member is checked, nothing is made."""
    import dataclasses

    from engine.config import ConfigError
    from engine.config.resolve import resolve
    from engine.sweep.spec import check_sets, expand, parse_sweep

    p = opts.source(SWEEP_SOURCE)
    where = str(p.path)
    if not p.is_sweep:
        raise ConfigError(f"preset {p.name!r} has no [sweep] table; run it with `grok run --preset {p.name}`")
    spec = parse_sweep(p.sweep, where)
    if seeds is not None:
        if seeds < 1:
            raise ConfigError(f"--seeds must be >= 1 (got {seeds})")
        spec = dataclasses.replace(spec, seeds=tuple(range(seeds)))
    over = opts.overrides()
    check_sets(spec, over)
    base = resolve(p, over)
    members = expand(base, spec, where)
    return p.name, base, spec, [m for m, _ in members]


def new_group(opts: RunOptions, seeds: int | None, parents: str | None = None) -> Group:
    """Expand the preset's [sweep] table and create the group directory under `opts.out_root`; every member is
    checked first, and with `parents` matched to its ended run in that group, which it links
    (engine/sweep/parents.py)."""
    from engine.records.group_dir import Group
    from engine.sweep.parents import link_parents, match_parents

    name, base, spec, members = plan_group(opts, seeds)
    links = match_parents(base, members, Group.open(parents)) if parents else {}
    group = Group.create(opts.out_root, name, base, spec, members)
    link_parents(group, links)
    return group


def execute(
    group: Group, workers: int, backend: str, address: str | None, quiet: bool, resume_hint: str | None = None
) -> int:
    """Run the group's pending members with progress and Ctrl-C handling; print the report.

    `resume_hint`: the directory an interrupted run is resumed from (default: the group's)."""
    from engine.sweep.events import MemberEnded
    from engine.sweep.member import has_ended
    from engine.sweep.pool import Sweep
    from engine.sweep.report.tables import render
    from grok_tui.sweep_progress import make_sweep_progress

    sw = Sweep(group, workers=workers, backend=backend, address=address)
    total = len(sw.members)
    adopted = sum(has_ended(group, m) for m in sw.members)  # ended before a sweep process died: not trained
    line = f"sweep {group.dir}: {total - adopted} of {len(group.members)} members to train"
    if adopted:
        line += f", {adopted} already ended (adopted from their run directories)"
    say(wrap(f"{line}, {backend} backend"))

    def stop_waiting(signum: int) -> None:  # a second Ctrl-C: stop waiting for the members' last rows
        raise KeyboardInterrupt

    progress = make_sweep_progress(group, total, quiet)
    failed = 0
    with StopSignals(lambda signum: sw.stop(), stop_waiting) as stops:
        try:
            for ev in sw.events():
                with contextlib.suppress(OSError):  # the terminal is gone (SIGHUP): the rows still go to results.csv
                    progress.handle(ev)
                if isinstance(ev, MemberEnded) and ev.row.get("status") == Status.FAILED:
                    failed += 1
        except KeyboardInterrupt:
            stops.caught.append(signal.SIGINT)
        finally:
            progress.close()
    say("")
    say(fold_text(render(group)))
    say(path_line("group directory", group.dir))
    if stops.caught:
        say(f"interrupted: `grok sweep --resume {resume_hint or group.dir}` runs what is missing")
        return stops.exit_code()  # 130 SIGINT, 143 SIGTERM, 129 SIGHUP, as a shell reports them
    if failed:
        print(f"error: {failed} member(s) failed; see error.txt in their run directories", file=sys.stderr)
        return 1
    return 0
