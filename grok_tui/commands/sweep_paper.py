"""`grok sweep --preset paper` and `grok sweep --resume PAPER_DIR`: every claim's sweep in one paper directory.

The record (paper.json, engine/records/paper.py) says which sweeps ended; a resume skips those,
resumes the unfinished group (its ended members adopted) and starts the rest with the options the
paper was made with. Each process's work on a sweep is one segment of the record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.status import PaperStatus
from grok_tui.commands.signals import StopSignals, say

if TYPE_CHECKING:
    from engine.records.paper import Paper


def run_paper(
    sets: list[str],
    seeds: int | None,
    steps: int | None,
    out: str,
    device: str | None,
    workers: int,
    backend: str,
    address: str | None,
    quiet: bool,
) -> int:
    """Check every sweep of the paper with these options, make the paper directory and run it."""
    from engine.claims import paper as paper_list
    from engine.config import ConfigError
    from engine.records.paper import Paper
    from grok_tui.commands.sweep_group import plan_group
    from grok_tui.options import RunOptions

    sweeps = paper_list.PAPER_SWEEPS
    for name, _ in sweeps:  # a bad --set or --steps fails here, before any directory is made
        try:
            plan_group(RunOptions(name, sets=list(sets), steps=steps, device=device), seeds)
        except ConfigError as e:
            raise ConfigError(f"--preset paper: sweep {name}: {e}") from None
    options = {"sets": list(sets), "seeds": seeds, "steps": steps, "device": device}
    paper = Paper.create(out, sweeps, options)
    say(f"paper {paper.dir}: {len(sweeps)} sweeps; `grok sweep --resume {paper.dir}` continues it if stopped")
    return run_sweeps(paper, workers, backend, address, quiet)


def resume_paper(path: str, workers: int, backend: str, address: str | None, quiet: bool) -> int:
    """Go on with a paper directory: ended sweeps skipped, the unfinished one resumed, the rest started."""
    from engine.records.paper import Paper

    paper = Paper.open(path)
    left = [s.preset for s in paper.sweeps if s.status != PaperStatus.ENDED]
    say(f"paper {paper.dir}: {len(paper.sweeps) - len(left)} of {len(paper.sweeps)} sweeps ended, {len(left)} to run")
    return run_sweeps(paper, workers, backend, address, quiet)


def run_sweeps(paper: Paper, workers: int, backend: str, address: str | None, quiet: bool) -> int:
    """Each sweep not ended yet, in the record's order, as one segment each; stops at an interrupt."""
    from engine.records.group_dir import Group
    from engine.records.paper import render, segment_text, source_commit
    from engine.rundir import RunLock
    from engine.sweep.pool import default_workers
    from grok_tui.commands.sweep_group import execute, new_group
    from grok_tui.options import RunOptions

    commit = source_commit()
    opts = paper.options
    worst = 0
    interrupted = False
    # A stop signal between two groups lands here; inside a group, `execute` handles it.
    with RunLock(paper.dir), StopSignals(lambda signum: None) as between:
        for i, s in enumerate(paper.sweeps):
            if s.status == PaperStatus.ENDED:
                continue
            if between.caught:
                interrupted = True
                break
            say(f"\n=== {f'claim {s.claim}' if s.claim else s.preset}: grok sweep --preset {s.preset}")
            meter = paper.begin(i, workers or default_workers(), backend, commit)
            code: int | None = None
            try:
                if s.group:
                    group = Group.open(paper.dir / s.group)
                else:
                    named = RunOptions(
                        s.preset, sets=opts["sets"], steps=opts["steps"], device=opts["device"], out=str(paper.dir)
                    )
                    group = new_group(named, opts["seeds"])
                    paper.set_group(i, group.dir)
                code = (
                    between.exit_code()
                    if between.caught
                    else execute(group, workers, backend, address, quiet, str(paper.dir))
                )
            finally:  # an error (a full disk, a corrupt group) leaves the segment interrupted, its times kept
                status = PaperStatus.ENDED if code is not None and code < 128 else PaperStatus.INTERRUPTED
                seg = paper.end(i, meter, status, code)
            say(f"paper: {s.preset} {status}, {segment_text(seg)}")
            assert code is not None  # an error left through the finally above
            worst = max(worst, code)
            if code >= 128:
                interrupted = True
                break
    say("")
    say(render(paper))
    if interrupted or any(s.status != PaperStatus.ENDED for s in paper.sweeps):
        say(f"interrupted: `grok sweep --resume {paper.dir}` runs what is missing")
        return worst if worst >= 128 else between.exit_code()
    return worst
