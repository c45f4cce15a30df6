"""Sweep events: what a running member reports to the sweep process, as small frozen dataclasses.

Members send them from their worker (a pool process, a Ray task) through one channel per backend,
in the order they happen, and `engine.sweep.drain` yields them to the faces. A member's
`MemberEnded` always precedes the next `MemberStarted` of the same worker, so a face that counts
running members never counts more than the workers in use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MemberStarted:
    """A member's run directory exists and training began (or resumed at its checkpoint)."""

    member: str
    run_dir: str  # the directory's name inside the group
    max_steps: int


@dataclass(frozen=True)
class MemberProgressed:
    """A running member reached `step`."""

    member: str
    step: int


@dataclass(frozen=True)
class MemberEnded:
    """A member ended; `row` is its results.csv row (status finished, diverged, failed or interrupted).

    `adopted` is true for a member that had ended before the sweep process died (e.g. SIGKILL) and
    was recorded on `--resume` from its run directory instead of being trained again.
    """

    member: str
    row: dict[str, Any]
    adopted: bool = False


SweepEvent = MemberStarted | MemberProgressed | MemberEnded
