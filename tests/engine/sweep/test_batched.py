"""The batched backend's seam: a batch of members trained as one model writes each member's own run directory."""

from __future__ import annotations

import math
from pathlib import Path

from engine.events import EvalLogged
from engine.rundir import read_csv, read_summary
from engine.sweep.batched import plan, run_batch
from engine.sweep.events import MemberEnded, MemberStarted, SweepEvent
from engine.sweep.member import MemberSpec
from engine.trainer import Trainer
from tests.conftest import tiny_config


def test_run_batch_writes_member_run_dirs_and_rows(tmp_path: Path) -> None:
    specs = [MemberSpec(f"m{s:03d}", tiny_config(train__seed=s), str(tmp_path / f"m{s:03d}-s{s}")) for s in (0, 1)]
    assert plan(specs) == [[specs[0]], [specs[1]]]  # the CPU trains members one by one
    seen: list[SweepEvent] = []
    rows = run_batch(specs, seen.append, lambda: False)
    assert [r["member"] for r in rows] == ["m000", "m001"]
    assert [r["run_dir"] for r in rows] == ["m000-s0", "m001-s1"]  # the planned directories
    for spec, row in zip(specs, rows, strict=True):
        d = Path(spec.run_dir)
        assert read_summary(d)["status"] == "finished" == row["status"]
        solo = [ev.row for ev in Trainer(spec.config) if isinstance(ev, EvalLogged)]
        metrics = read_csv(d / "metrics.csv")
        assert [int(r["step"]) for r in metrics] == [r["step"] for r in solo]
        assert math.isclose(float(metrics[-1]["val_acc"]), solo[-1]["val_acc"], abs_tol=1e-6)
    assert MemberStarted("m000", "m000-s0", 60) in seen
    assert [e for e in seen if isinstance(e, MemberEnded)] == [
        MemberEnded("m000", rows[0]),
        MemberEnded("m001", rows[1]),
    ]
