"""Sweep progress from a scripted event stream: counts, ETA and the plain lines."""

from __future__ import annotations

import io
from pathlib import Path

from engine.records.group_dir import Group
from engine.sweep.events import MemberEnded, MemberProgressed, MemberStarted, SweepEvent
from engine.sweep.spec import expand, parse_sweep
from grok_tui.sweep_progress import PlainSweepProgress, RichSweepProgress
from tests.conftest import tiny_config


def _group(tmp_path: Path) -> Group:
    spec = parse_sweep({"seeds": 3, "arms": {"adam": {}, "adamlr": {"optim.lr_ratio": 10.0}}})
    base = tiny_config()
    return Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])


EVENTS: list[SweepEvent] = [
    MemberStarted("m000", "r0", 100),
    MemberStarted("m001", "r1", 100),
    MemberProgressed("m000", 50),
    MemberEnded("m000", {"status": "finished", "generalized_step": 40, "final_val_acc": 0.97, "wall_s": 1.5}),
    MemberEnded("m001", {"status": "failed", "error": "ValueError: boom"}),
    MemberStarted("m002", "r2", 100),
]


def test_plain_lines_and_counts(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: one line per member (80 columns fold them)
    out = io.StringIO()
    p = PlainSweepProgress(_group(tmp_path), 6, out)
    for ev in EVENTS:
        p.handle(ev)
    lines = out.getvalue().splitlines()
    assert lines[0] == "start m000 adam s0  -> r0"
    assert lines[2].startswith("[1/6] m000 adam s0: finished  95% val at step 40  val_acc 0.970  1.5s")
    assert "[2/6] m001 adam s1: failed" in lines[3] and "ValueError: boom" in lines[3]
    st = p.state
    assert (st.done, st.failed, list(st.running)) == (1, 1, ["m002"])
    assert st.eta() != "?"


def test_rich_display_counts(tmp_path: Path) -> None:
    p = RichSweepProgress(_group(tmp_path), 6)
    p.progress.console.file = io.StringIO()
    for ev in EVENTS:
        p.handle(ev)
    p.close()
    task = p.progress.tasks[0]
    assert task.completed == 2 and task.fields["running"] == 1 and task.fields["failed"] == 1
