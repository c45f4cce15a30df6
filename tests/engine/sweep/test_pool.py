"""The local process pool: members run in spawned workers, failures are recorded, the sweep goes on."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from engine.config import ConfigError
from engine.records.group_dir import Group
from engine.rundir import RunInUse, RunLock
from engine.sweep.events import MemberEnded, MemberProgressed, MemberStarted
from engine.sweep.member import member_spec
from engine.sweep.pool import Sweep, wait_for_orphans
from engine.sweep.spec import expand, parse_sweep
from tests.conftest import tiny_config


@pytest.mark.skipif(torch.cuda.device_count() > 7, reason="this machine has a cuda:7")
def test_pool_runs_every_member_and_records_failures(tmp_path: Path) -> None:
    table = {"seeds": 2, "arms": {"ok": {}, "bad": {"train.device": "cuda:7"}}}
    spec = parse_sweep(table)
    base = tiny_config(train__threads=1)  # one thread per worker, as the suite runs (tests/data/tiny_sweep.toml)
    g = Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])
    sw = Sweep(g, workers=2)
    evs = list(sw.events())
    started = {e.member for e in evs if isinstance(e, MemberStarted)}
    ended = {e.member: e.row for e in evs if isinstance(e, MemberEnded)}
    assert set(ended) == {"m000", "m001", "m002", "m003"}
    assert started <= set(ended)
    assert [ended[m]["status"] for m in sorted(ended)] == ["finished", "finished", "failed", "failed"]
    assert "cuda:7" in ended["m002"]["error"]
    with open(g.dir / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["member"] for r in rows] == ["m000", "m001", "m002", "m003"]
    for r in rows:
        if r["status"] == "finished":
            assert (g.dir / r["run_dir"] / "summary.json").exists()
    assert [m.id for m in Group.open(g.dir).pending()] == ["m002", "m003"]  # failed: run again on --resume


def test_stop_marks_running_members_interrupted_and_resume_finishes(tmp_path: Path) -> None:
    """Whatever the machine's speed: a member ends interrupted (with its checkpoint) or finished, the
    rest stay pending, and --resume finishes every member in its own directory."""
    spec = parse_sweep({"seeds": 3})
    base = tiny_config(train__threads=1, train__max_steps=600, train__eval_every=100, train__checkpoint_every=100)
    g = Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])
    sw = Sweep(g, workers=2)
    rows = {}
    running: set[str] = set()
    for ev in sw.events():
        if isinstance(ev, MemberStarted):
            running.add(ev.member)
            assert len(running) <= 2  # never more running members than workers
            sw.stop()
        elif isinstance(ev, MemberProgressed):
            assert ev.member in running
        elif isinstance(ev, MemberEnded):
            running.discard(ev.member)
            rows[ev.member] = ev.row
    assert rows
    for r in rows.values():
        assert r["status"] in ("interrupted", "finished")
        assert (g.dir / r["run_dir"] / "checkpoint.pt").exists()
        assert r["steps"] < 600 if r["status"] == "interrupted" else r["steps"] == 600
    g2 = Group.open(g.dir)
    finished = {k for k, r in rows.items() if r["status"] == "finished"}
    pending = [m.id for m in g2.pending()]
    assert pending == sorted({"m000", "m001", "m002"} - finished)
    first = {k: r["run_dir"] for k, r in rows.items()}
    ends = [e.row for e in Sweep(g2, workers=1).events() if isinstance(e, MemberEnded)]  # one torch import
    assert sorted(r["member"] for r in ends) == pending
    assert all(r["status"] == "finished" and r["steps"] == 600 for r in ends)
    for r in ends:  # an interrupted member continues in its own run directory
        if r["member"] in first:
            assert r["run_dir"] == first[r["member"]]
    assert Group.open(g.dir).pending() == []
    assert sorted(p.name for p in g.dir.iterdir() if p.is_dir()) == [m.dir_name() for m in g.members]


def test_a_group_runs_in_one_sweep_process_at_a_time(tmp_path: Path) -> None:
    spec = parse_sweep({"seeds": 1})
    base = tiny_config()
    g = Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])
    with RunLock(g.dir), pytest.raises(RunInUse, match=f"{g.dir} is in use by pid {os.getpid()}"):
        list(Sweep(Group.open(g.dir)).events())
    assert not any(p.is_dir() for p in g.dir.iterdir())  # nothing ran


def test_resume_waits_for_a_member_directory_still_held_by_an_orphaned_worker(tmp_path: Path) -> None:
    spec = parse_sweep({"seeds": 1})
    base = tiny_config(train__threads=1)
    g = Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])
    s = member_spec(g, g.members[0])
    Path(s.run_dir).mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, s.run_dir], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ConfigError, match=f"is in use by pid {holder.pid}"):
            wait_for_orphans([s], timeout=0.2)
        assert holder.stdin is not None
        holder.stdin.close()  # the holder exits: the kernel drops its lock
        holder.wait(timeout=60)
        wait_for_orphans([s], timeout=60)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


# A process that holds a run directory's lock until its stdin closes.
HOLD = (
    "import sys\nfrom engine.rundir import RunLock\n"
    "lock = RunLock(sys.argv[1]).acquire()\nprint('held', flush=True)\nsys.stdin.read()\n"
)
