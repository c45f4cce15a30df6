"""The fork study's reading (engine/claims/studies/forks.py) on a tiny fork_feed_starved group whose
targets' accuracy is then written by hand: before, after and the unfed control are known."""

from __future__ import annotations

import csv

from engine.claims.studies.forks import METRIC, fork_feed
from engine.records.group_dir import Group
from engine.rundir import read_summary


def _set(group: Group, arm: str, value: float, since: float = -1) -> None:
    """The targets' accuracy of every member of `arm`: `value` at the steps after `since`, 0.2 before."""
    for m in (m for m in group.members if m.arm == arm):
        path = group.member_dir(m) / "metrics.csv"
        rows = list(csv.DictReader(path.open()))
        for r in rows:
            r[METRIC] = str(value if float(r["step"]) > since else 0.2)
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


def test_fed_forks_against_their_fork_step_and_the_unfed_parent(fork_group: Group) -> None:
    fork = next(m for m in fork_group.members if m.fork_of)
    at = float(read_summary(fork_group.member_dir(fork)).fork_step or 0)
    _set(fork_group, "starved", 0.3, since=at)  # the control rises a little after the fork step
    _set(fork_group, "feed", 0.9, since=at)  # fed: rises, above the control
    _set(fork_group, "feed_rescaled", 0.25, since=at)  # rescaled: rises, below the control
    r = fork_feed(fork_group)
    assert [(p.text.split(": ")[1], p.state) for p in r.parts] == [
        ("the targets rise", "holds"),
        ("above the unfed parent", "holds"),
        ("the targets rise", "holds"),
        ("above the unfed parent", "opposite"),
    ]
    assert r.values["feed_before"].startswith("0.200") and r.values["feed_after"].startswith("0.900")
    assert r.values["control_change"].startswith("+0.100")
