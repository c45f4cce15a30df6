"""The Ray backend against a local Ray instance the test starts: same members, same results.csv."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from engine.records.group_dir import Group
from engine.sweep.events import MemberEnded, MemberStarted
from engine.sweep.pool import Sweep
from engine.sweep.spec import expand, parse_sweep
from tests.conftest import tiny_config


@pytest.fixture(scope="module")
def local_ray():
    import ray  # in the test extra: CI runs this test, it is never skipped (imported here, not at collection)

    # one CPU and no pre-started workers: one Ray worker imports torch, not two idle ones as well
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, _system_config={"enable_worker_prestart": False})
    yield
    ray.shutdown()


def test_ray_backend_runs_members_as_tasks(tmp_path: Path, local_ray: None) -> None:
    spec = parse_sweep({"seeds": 2, "grid": {"data.op": ["add", "mul"]}})
    base = tiny_config(train__max_steps=40)
    g = Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])
    evs = list(Sweep(g, backend="ray").events())
    ended = {e.member: e.row for e in evs if isinstance(e, MemberEnded)}
    assert sorted(ended) == ["m000", "m001", "m002", "m003"]
    assert all(r["status"] == "finished" and r["steps"] == 40 for r in ended.values())
    assert {e.member for e in evs if isinstance(e, MemberStarted)} == set(ended)  # progress crossed back
    with open(g.dir / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["data.op"] for r in rows] == ["add", "add", "mul", "mul"]
    for r, m in zip(rows, g.members, strict=True):
        assert r["run_dir"] == m.dir_name() and (g.dir / r["run_dir"] / "metrics.csv").exists()
    assert Group.open(g.dir).pending() == []
