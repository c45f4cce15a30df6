"""One sweep member, from its spec to its results row: a normal `Run` in its own directory of the group.

`MemberSpec` is what crosses to a worker (a pool process, a Ray task): built once in the sweep
process, plain data only. `prepare` looks at a pending member's directory and decides how it goes on
after an interruption, a signal or a SIGKILL of the sweep process: a member whose run ended is
adopted from its summary.json, one with a checkpoint continues from it, and one without either
starts over in the same directory, so a group never holds two directories for one member.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.config import RunConfig
from engine.events import EvalLogged, RunStarted, Status, StepsTaken
from engine.records.group_dir import Group, Member
from engine.records.results import ENDED, ProbeTally, failed_row, results_row
from engine.rundir import CHECKPOINT, empty_run_dir, read_metrics, read_summary
from engine.sweep.events import MemberEnded, MemberProgressed, MemberStarted, SweepEvent
from engine.train.run import Run

NOTIFY_EVERY_S = 0.5  # a member reports its step and polls the stop flag at most this often
Notify = Callable[[SweepEvent], None]
Stopped = Callable[[], bool]


@dataclass(frozen=True)
class MemberSpec:
    """A member as a worker receives it: its id, its checked config and its run directory.

    `has_checkpoint` is true when `run_dir` holds a checkpoint to continue from; otherwise the member starts
    at step 0 in `run_dir` (created, or emptied of an earlier start that left no checkpoint). `start_step`
    is the step it starts from where that is known before the checkpoint is read (0, a fork's step, an
    interrupted run's last), else None: members stack only with members that start at their step.
    """

    id: str
    config: RunConfig
    run_dir: str  # absolute path inside the group directory
    has_checkpoint: bool = False
    start_step: int | None = 0


def member_spec(group: Group, m: Member) -> MemberSpec:
    """The member's spec: its config, its directory, and whether a checkpoint there lets it continue."""
    d = group.member_dir(m).resolve()
    if not (d / CHECKPOINT).is_file():
        return MemberSpec(m.id, group.config(m), str(d))
    # a fork, or a run stopped cleanly, wrote its checkpoint at its summary's step; any other (a killed
    # process's last periodic checkpoint) is known only once read: such a member trains alone
    summary = read_summary(d)
    start = summary.steps if summary.status == Status.INTERRUPTED else None
    return MemberSpec(m.id, group.config(m), str(d), has_checkpoint=True, start_step=start)


def has_ended(group: Group, m: Member) -> bool:
    """Whether a pending member's run ended before the last sweep process died: --resume adopts it."""
    d = group.member_dir(m).resolve()
    return d.is_dir() and read_summary(d).status in ENDED


def prepare(group: Group, m: Member) -> MemberSpec | dict[str, Any]:
    """A pending member's spec, or its results row if its run had already ended (adopt it). A fork member
    without a checkpoint is forked from its member's run first (engine/sweep/forks.py); a failed row if it cannot be."""
    d = group.member_dir(m).resolve()
    if has_ended(group, m):  # its name in the group, not the target of a link (`--parents`, engine/sweep/parents.py)
        return adopted_row(m.id, d, group.config(m).train.max_steps, group.member_dir(m).name)
    if m.fork_of and not (d / CHECKPOINT).is_file():
        from engine.sweep.forks import fork_member

        err = fork_member(group, m, d)
        if err:
            return failed_row(m.id, err, d.name if d.is_dir() else "")
    return member_spec(group, m)


def adopted_row(member: str, run_dir: Path, max_steps: int, name: str = "") -> dict[str, Any]:
    """The results row of a member that ended, read back from its run directory.

    It equals the row the member's worker would have sent: the summary is the same file and the
    probe values are the metrics.csv rows, whose floats round-trip exactly.
    """
    tally = ProbeTally()
    for row in read_metrics(run_dir):
        tally.add(row)
    return results_row(member, read_summary(run_dir), max_steps=max_steps, run_dir=name or run_dir.name, tally=tally)


def run_member(spec: MemberSpec, notify: Notify | None, stop: Stopped) -> dict[str, Any]:
    """Train one member to its end in its run directory; report events to `notify`; return its row."""
    say = notify or (lambda ev: None)
    d = Path(spec.run_dir)
    try:
        if spec.has_checkpoint:
            run = Run.from_checkpoint(d)
        else:
            empty_run_dir(d)  # made, or emptied of an earlier start that left no checkpoint
            run = Run(spec.config, run_dir=d)
    except Exception as e:  # noqa: BLE001 - a member that cannot start is recorded, the sweep goes on
        row = failed_row(spec.id, f"{type(e).__name__}: {e}", d.name if d.is_dir() else "")
        say(MemberEnded(spec.id, row))
        return row
    tally = ProbeTally()
    mark = -math.inf
    for ev in run.events():
        if isinstance(ev, RunStarted):
            say(MemberStarted(spec.id, run.dir.name, ev.max_steps))
        elif isinstance(ev, EvalLogged):
            tally.add(ev.row)
        elif isinstance(ev, StepsTaken) and time.monotonic() - mark > NOTIFY_EVERY_S:
            mark = time.monotonic()
            say(MemberProgressed(spec.id, ev.step))
            if stop():
                run.stop(Status.INTERRUPTED)
    row = results_row(spec.id, run.summary, max_steps=run.cfg.train.max_steps, run_dir=run.dir.name, tally=tally)
    say(MemberEnded(spec.id, row))
    return row
