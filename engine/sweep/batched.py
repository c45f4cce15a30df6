"""Sweep members that share shapes, trained on a GPU as one batched model (engine/train/many.py).

`plan` groups a sweep's members into batches; `run_batch` trains one batch and writes each member's
normal run directory (config.json, metrics.csv, tokens.csv, summary.json, and a checkpoint every
train.checkpoint_every steps and at the end, in `Trainer`'s format, so an interrupted batched member
continues from it on --resume). On the CPU one model already fills the cores, so members run one by
one there unless `plan(..., stack=True)` asks (the tests compare a stacked sweep with its members alone
on the CPU). Every member that `why_not_batched` accepts stacks: on the paper's sweeps all but the
starved split's (its members' training sets differ in size), weighted epochs and decay settings included.
A batch on a card holds as many members as fit in a share of its free memory, up to a cap
(engine/sweep/card_memory.py); on the CPU, CPU_MEMBERS.
"""

from __future__ import annotations

import math
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.config import RunConfig
from engine.events import EvalLogged, RunStarted, Status, StepsTaken
from engine.records.results import ProbeTally, results_row
from engine.rundir import RunLock, empty_run_dir
from engine.sweep.card_memory import CPU_MEMBERS, free_bytes, members_per_batch
from engine.sweep.events import MemberEnded, MemberProgressed, MemberStarted
from engine.sweep.member import NOTIFY_EVERY_S, MemberSpec, Notify, Stopped
from engine.train.run import Resume, RunSink

if TYPE_CHECKING:
    from engine.train.many import ManyTrainer


def _wants_batches(cfg: RunConfig) -> bool:
    """Whether the member trains on a GPU (train.device cuda, or auto with an NVIDIA card present): members
    stack there; on the CPU one model already fills the cores."""
    dev = cfg.train.device
    if dev.startswith("cuda"):
        return True
    if dev != "auto" or not Path("/proc/driver/nvidia").exists():
        return False  # no NVIDIA driver: the sweep's parent process stays torch-free
    import torch

    return torch.cuda.is_available()


def batch_size(cfg: RunConfig, workers: int = 1, free: int | None = None) -> int:
    """Members per stacked model of this config: as many as fit on its card with `workers` batches training
    on it at once (engine/sweep/card_memory.py; `free`: the card's free bytes, asked of the card when None),
    else CPU_MEMBERS: off a card, and on a card this machine lacks (its members then fail in their worker
    with the device's own error, not in the planner)."""
    if not _wants_batches(cfg):
        return CPU_MEMBERS
    if free is None:
        try:
            free = free_bytes(cfg.train.device)
        except (RuntimeError, AssertionError, ValueError):  # no such card; torch built without CUDA
            return CPU_MEMBERS
    return members_per_batch(cfg, free, workers)


def plan(
    specs: list[MemberSpec],
    max_members: int | None = None,
    stack: bool | None = None,
    workers: int = 1,
    free: int | None = None,
) -> list[list[MemberSpec]]:
    """Batches of members that can train as one model on a GPU; every other member alone. `stack`:
    True or False for every member whatever its device; None, members on a GPU.

    A batch holds at most `max_members`, else `batch_size` of its first member (the others share its
    shapes). Its members start at one step: 0, or a checkpoint's (forks, resumed members; each member's
    state is loaded into its row). A member whose start is unknown (`MemberSpec.start_step`) runs alone.
    """

    def wants(s: MemberSpec) -> bool:
        return s.start_step is not None and (_wants_batches(s.config) if stack is None else stack)

    if not any(wants(s) for s in specs):
        return [[s] for s in specs]
    from engine.train.many import why_not_batched

    out: list[list[MemberSpec]] = []
    open_batches: list[tuple[list[MemberSpec], int]] = []  # each with its size, set by its first member
    for s in specs:
        if not wants(s):
            out.append([s])
            continue
        for b, size in open_batches:
            same_start = b[0].start_step == s.start_step and b[0].has_checkpoint == s.has_checkpoint
            if len(b) < size and same_start and why_not_batched([b[0].config, s.config]) is None:
                b.append(s)
                break
        else:
            if why_not_batched([s.config]) is None:
                open_batches.append(([s], max_members or batch_size(s.config, workers, free)))
            else:
                out.append([s])
    return [_by_settings(b) for b, _ in open_batches] + out


def _by_settings(batch: list[MemberSpec]) -> list[MemberSpec]:
    """The batch with members of equal optimizer settings side by side, in order of first appearance:
    each run of them steps as one optimizer (engine/train/optim.py `shared_ranges`). A member's directory and
    row go with its spec, so the order inside a batch is free."""
    from engine.train.optim import settings

    groups: dict[str | None, list[MemberSpec]] = {}
    alone: list[MemberSpec] = []
    for s in batch:
        key = settings(s.config)
        (alone if key is None else groups.setdefault(key, [])).append(s)
    return [s for g in groups.values() for s in g] + alone


def batchable(specs: list[MemberSpec]) -> bool:
    """True when `plan` would put all these members in one batch."""
    return len(plan(specs, max(len(specs), 1))) == 1


def run_batch(specs: list[MemberSpec], notify: Notify | None, stop: Stopped) -> list[dict[str, Any]]:
    """Train the batch as one model; one results row per member, the row `run_member` returns.

    Each member's directory is written by its own `RunSink`, the one a single `Run` uses: a fault in
    the batch ends every member that is still running as `failed`, with error.txt and a last checkpoint.
    A member with a checkpoint continues from it as `Run.from_checkpoint` would (engine/train/run.py `Resume`).
    """
    from engine.train.many import ManyTrainer

    say: Notify = notify or (lambda ev: None)
    cfgs = [s.config for s in specs]
    dirs = [Path(s.run_dir) for s in specs]
    sinks: list[RunSink] = []
    locks: list[RunLock] = []
    tallies = [ProbeTally() for _ in specs]
    try:
        resumes: list[Resume | None] = []
        for s, d, c in zip(specs, dirs, cfgs, strict=True):
            if not s.has_checkpoint:
                empty_run_dir(d)
            locks.append(RunLock(d).acquire())  # before a checkpoint is read: no second writer
            resumes.append(Resume.read(d, c) if s.has_checkpoint else None)
        trainer = ManyTrainer(cfgs)
        for i, r in enumerate(resumes):
            if r is not None:
                try:
                    trainer.load_member_state(i, r.state)
                except (KeyError, RuntimeError, ValueError, TypeError, IndexError, AttributeError) as e:
                    raise r.mismatch(e) from None
        for i, (d, c, r) in enumerate(zip(dirs, cfgs, resumes, strict=True)):
            if r is not None:
                r.finish(trainer.columns, trainer.step)
            state, summary = partial(trainer.member_state_dict, i), partial(trainer.member_summary, i)
            sinks.append(RunSink(d, c, locks[i], state, summary, resume=r is not None, step=trainer.step))
        _drive(trainer, specs, sinks, tallies, say, stop)
    finally:
        for sink in sinks:
            sink.close()
        for lock in locks[len(sinks) :]:  # a start that failed before its sink: the lock goes back
            lock.release()
    rows = []
    for s, d, sink, tally in zip(specs, dirs, sinks, tallies, strict=True):
        row = results_row(s.id, sink.summary, max_steps=s.config.train.max_steps, run_dir=d.name, tally=tally)
        say(MemberEnded(s.id, row))
        rows.append(row)
    return rows


def _drive(
    trainer: ManyTrainer,
    specs: list[MemberSpec],
    sinks: list[RunSink],
    tallies: list[ProbeTally],
    say: Notify,
    stop: Stopped,
) -> None:
    """Hand each member's events to its sink and the sweep's notices to `say`; a fault fails every running
    member, an interrupt (KeyboardInterrupt, a signal) ends each one as interrupted and passes on."""
    mark = -math.inf
    stream = trainer.member_events()
    try:
        for i, ev in stream:
            ev = sinks[i].handle(ev)
            if isinstance(ev, RunStarted):
                say(MemberStarted(specs[i].id, Path(specs[i].run_dir).name, ev.max_steps))
            elif isinstance(ev, EvalLogged):
                tallies[i].add(ev.row)
            elif isinstance(ev, StepsTaken) and time.monotonic() - mark > NOTIFY_EVERY_S:
                mark = time.monotonic()
                for s, sink in zip(specs, sinks, strict=True):
                    if not sink.ended:
                        say(MemberProgressed(s.id, ev.step))
                if stop():
                    trainer.stop(Status.INTERRUPTED)
    except Exception as e:  # noqa: BLE001 - an engine or write fault: every running member fails with it
        for sink in sinks:
            if not sink.ended:
                sink.failed(e)
    except BaseException:
        for sink in sinks:
            if not sink.ended:
                sink.interrupted()
        raise
    finally:
        stream.close()
