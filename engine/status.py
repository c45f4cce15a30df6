"""A run's status: one StrEnum the engine writes and every face shows (its own module, below the run
directory's schema and the events, which both use it)."""

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
