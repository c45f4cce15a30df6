"""Statuses as StrEnums the engine writes and every face shows: a run's, and a paper run's sweep's (their own
module, below the run directory's schema and the events, which both use them)."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """A run's status, as the engine writes it and every face shows it (a StrEnum: equal to its text)."""

    RUNNING = "running"  # a writer holds the run (engine/train/run.py)
    PAUSED = "paused"
    FINISHED = "finished"  # ran its budget, or train.patience stopped it (RunFinished)
    INTERRUPTED = "interrupted"  # stopped by a signal or a face; resumable from its checkpoint
    FAILED = "failed"  # an error; error.txt says which
    DIVERGED = "diverged"  # a non-finite loss
    PREPARED = "prepared"  # a fork written and not started yet (`grok fork --prepare`)
    # what the faces say of a run no summary says: its writer died without closing it, it has no
    # config.json yet, or there is no run at all (the TUI before its first run)
    DEAD = "dead"
    STARTING = "starting"
    IDLE = "idle"

    @classmethod
    def written(cls) -> tuple[Status, ...]:
        """The statuses summary.json may hold (engine/rundir/schema.py checks them)."""
        return (cls.RUNNING, cls.PAUSED, cls.FINISHED, cls.INTERRUPTED, cls.FAILED, cls.DIVERGED, cls.PREPARED)

    @property
    def ended(self) -> bool:
        """Ended by its own rule (its budget, train.patience, a NaN loss): a sweep's --resume does not run
        it again, and a group's curves hold a finished member's last value."""
        return self in (Status.FINISHED, Status.DIVERGED)


class PaperStatus(StrEnum):
    """A sweep's status in a paper run's paper.json (engine/records/paper.py; a StrEnum: equal to its text)."""

    PENDING = "pending"  # not started yet
    RUNNING = "running"  # a process works on it, or was killed while it did
    ENDED = "ended"  # every member ran; the paper's --resume skips it
    INTERRUPTED = "interrupted"  # stopped by a signal; the paper's --resume runs it again
    # what `grok report PAPER_DIR` shows of a sweep paper.json calls running while no process holds the
    # paper directory: its process was killed before it wrote the sweep's end
    KILLED = "killed"

    @classmethod
    def written(cls) -> tuple[PaperStatus, ...]:
        """The statuses paper.json may hold (engine/rundir/schema.py checks them)."""
        return (cls.PENDING, cls.RUNNING, cls.ENDED, cls.INTERRUPTED)
