"""Sweeps of forks: a fork member's run directory made from the member it forks (docs/FORK.md).

A preset's [sweep] `fork_at` and [sweep.forks.NAME] tables add one member per fork arm and member of
its `from` arm (engine/sweep/spec.py). Once that member has ended, its fork member is written into its
own planned directory by `grok fork`'s engine (engine/train/fork.py) at the step `fork_at` names: the kept
checkpoint of its memorized (M) or generalized (G) phase, or a kept step. From then on it is a member
like any other that continues from a checkpoint: run, stopped and resumed by the sweep.
"""

from __future__ import annotations

from pathlib import Path

from engine.config import ConfigError
from engine.records.group_dir import Group, Member, fork_settings, fork_window
from engine.rundir import checkpoint_at, list_kept
from engine.train.fork import fork_run

PHASE_MARK = {"memorized": "M", "generalized": "G"}


def fork_step(run_dir: Path, fork_at: str) -> int | None:
    """The step `fork_at` names in a run: its phase's kept checkpoint, or the step itself where a kept
    checkpoint or the run's last checkpoint holds it (as `grok fork --at` takes it); None if absent."""
    kept = list_kept(run_dir)
    if fork_at in PHASE_MARK:
        marked = [k.step for k in kept if PHASE_MARK[fork_at] in k.why]
        return marked[0] if marked else None
    step = int(fork_at)
    try:
        checkpoint_at(run_dir, step)  # a kept one, or checkpoint.pt at that step (a run's last step)
    except ConfigError:
        return None
    return step


def fork_member(group: Group, m: Member, into: Path) -> str:
    """Write fork member `m` into `into` from the run of the member it forks; '' when done, else why not."""
    parent = group.member(m.fork_of)
    src = group.member_dir(parent).resolve()
    at = group.spec.fork_at
    step = fork_step(src, at)
    if step is None:
        what = f"never {at}" if at in PHASE_MARK else f"has no kept checkpoint at step {at}"
        return f"{parent.id} ({parent.label()}) {what}: nothing to fork (train.keep_every keeps the phases)"
    table = group.spec.fork_table(m.arm)
    settings = fork_settings(table)
    if window := fork_window(table):  # the same number of steps after the fork, wherever the fork step falls
        settings["train.max_steps"] = step + window
    try:
        fork_run(src, step, settings, list(m.intervene), into=into)
    except ConfigError as e:
        return str(e)
    return ""
