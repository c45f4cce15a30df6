"""One member in-process: its run directory, its row, its events, and how it goes on after an interruption."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from engine.records.group_dir import Group
from engine.sweep.events import MemberEnded, MemberProgressed, MemberStarted, SweepEvent
from engine.sweep.member import MemberSpec, adopted_row, prepare, run_member
from engine.sweep.spec import expand, parse_sweep
from engine.sweep.task import run_members
from tests.conftest import tiny_config


def _group(tmp_path: Path, table: dict[str, Any], **over: object) -> Group:
    spec = parse_sweep(table)
    base = tiny_config(**over)
    return Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])


def _spec(g: Group, i: int) -> MemberSpec:
    got = prepare(g, g.members[i])
    assert isinstance(got, MemberSpec)
    return got


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.skipif(torch.cuda.device_count() > 7, reason="this machine has a cuda:7")
def test_run_members_writes_run_dirs_rows_and_typed_events(tmp_path: Path) -> None:
    g = _group(tmp_path, {"seeds": [0], "arms": {"ok": {}, "bad": {"train.device": "cuda:7"}}})
    events: list[SweepEvent] = []
    ok, bad = run_members([_spec(g, 0), _spec(g, 1)], events.append, lambda: False)
    assert ok["status"] == "finished" and ok["steps"] == 60 and ok["run_dir"] == "m000-ok-s0"
    assert (g.dir / "m000-ok-s0" / "metrics.csv").exists()
    assert bad["status"] == "failed" and "CUDA" in bad["error"]
    assert events[0] == MemberStarted("m000", "m000-ok-s0", 60)
    assert [type(e) for e in events[-2:]] == [MemberEnded, MemberEnded]
    assert events[-2] == MemberEnded("m000", ok) and events[-1] == MemberEnded("m001", bad)


def test_run_members_stops_before_starting_more(tmp_path: Path) -> None:
    g = _group(tmp_path, {"seeds": [0, 1, 2]})
    events: list[SweepEvent] = []
    assert run_members([_spec(g, i) for i in range(3)], events.append, lambda: True) == []
    assert events == [] and not any(p.is_dir() for p in g.dir.iterdir())


def test_an_interrupted_member_continues_from_its_checkpoint_in_its_own_directory(tmp_path: Path) -> None:
    g = _group(tmp_path, {"seeds": [0]}, train__max_steps=200, train__eval_every=20, train__checkpoint_every=20)
    progressed: list[int] = []

    def note(ev: SweepEvent) -> None:
        if isinstance(ev, MemberProgressed):
            progressed.append(ev.step)

    # The stop flag turns true at the member's first progress report: it stops there, whatever the speed.
    row = run_member(_spec(g, 0), note, lambda: bool(progressed))
    assert row["status"] == "interrupted" and row["steps"] == progressed[0] < 200
    g.record(row)
    d = g.dir / "m000-s0"
    assert (d / "checkpoint.pt").exists()
    before = _rows(d / "metrics.csv")

    again = Group.open(g.dir)
    spec = _spec(again, 0)
    assert spec.has_checkpoint and Path(spec.run_dir) == d.resolve()
    end = run_member(spec, None, lambda: False)
    assert end["status"] == "finished" and end["steps"] == 200 and end["run_dir"] == "m000-s0"
    after = _rows(d / "metrics.csv")
    assert after[: len(before)] == before  # the rows up to the checkpoint are kept, wall_s included
    assert [int(r["step"]) for r in after] == list(range(0, 201, 20))
    assert [p.name for p in g.dir.iterdir() if p.is_dir()] == ["m000-s0"]


def test_a_member_that_ended_unrecorded_is_adopted_with_the_row_its_worker_sent(tmp_path: Path) -> None:
    """The sweep process died between the member's end and its results.csv row (e.g. SIGKILL)."""
    g = _group(tmp_path, {"seeds": [0, 1]}, probe__rank_every=20)
    live = run_member(_spec(g, 1), None, lambda: False)
    assert live["first_rank_E"] == 8.0 and "final_erank_EW" in live  # the rank probe's columns are tallied
    got = prepare(Group.open(g.dir), g.members[1])
    assert got == live
    assert adopted_row("m001", g.dir / live["run_dir"], 60) == live


def test_a_member_killed_before_its_first_checkpoint_starts_over_in_the_same_directory(tmp_path: Path) -> None:
    g = _group(tmp_path, {"seeds": [0]})
    d = g.member_dir(g.members[0])
    d.mkdir()
    (d / "metrics.csv").write_text("step,val_acc\n0,0.1\n")
    (d / "summary.json").write_text(json.dumps({"status": "running", "steps": 0}))
    spec = _spec(g, 0)
    assert not spec.has_checkpoint
    row = run_member(spec, None, lambda: False)
    assert row["status"] == "finished" and row["run_dir"] == d.name
    assert [int(r["step"]) for r in _rows(d / "metrics.csv")] == [0, 20, 40, 60]
    assert [p.name for p in g.dir.iterdir() if p.is_dir()] == [d.name]


def test_a_member_directory_another_process_writes_is_left_alone(tmp_path: Path) -> None:
    g = _group(tmp_path, {"seeds": [0]})
    d = g.member_dir(g.members[0])
    d.mkdir()
    (d / "metrics.csv").write_text("step,val_acc\n0,0.1\n")
    hold = (
        "import sys\nfrom engine.rundir import RunLock\nlock = RunLock(sys.argv[1]).acquire()\nprint(1, flush=True)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold + "sys.stdin.read()\n", str(d)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"1"
        row = run_member(_spec(g, 0), None, lambda: False)
    finally:
        holder.kill()
        holder.wait()
    assert row["status"] == "failed" and f"in use by pid {holder.pid}" in row["error"]
    assert (d / "metrics.csv").read_text() == "step,val_acc\n0,0.1\n"
