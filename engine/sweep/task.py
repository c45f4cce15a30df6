"""What one worker task runs: its members as one batched model when they share shapes on a GPU, else one by one."""

from __future__ import annotations

from typing import Any

from engine.sweep.batched import batchable, run_batch
from engine.sweep.member import MemberSpec, Notify, Stopped, run_member


def run_members(specs: list[MemberSpec], notify: Notify | None, stop: Stopped) -> list[dict[str, Any]]:
    """Run a task's members and return their rows; each member's events go to `notify`.

    Members not started when `stop()` turns true stay missing; `--resume` runs them.
    """
    if len(specs) > 1 and batchable(specs):
        return run_batch(specs, notify, stop)
    rows = []
    for s in specs:
        if stop():
            break
        rows.append(run_member(s, notify, stop))
    return rows
