"""Sweep expansion, the group directory, results.csv and resume."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from engine.config import ConfigError
from engine.sweep.pool import member_spec, run_members
from engine.sweep.spec import Group, check_sets, expand, parse_sweep
from tests.conftest import tiny_config

TABLE = {
    "seeds": 2,
    "compare": "adam",
    "grid": {"data.op": ["add", "mul"]},
    "arms": {"adam": {"optim.lr_ratio": 1.0}, "adamlr": {"optim.lr_ratio": 10.0}},
}


def test_members_are_arms_times_grid_times_seeds() -> None:
    spec = parse_sweep(TABLE)
    members = expand(tiny_config(), spec)
    assert len(members) == 2 * 2 * 2
    assert [m.id for m, _ in members] == [f"m{i:03d}" for i in range(8)]
    m, cfg = members[5]  # adamlr, add, seed 1
    assert (m.arm, m.values, m.seed) == ("adamlr", {"data.op": "add"}, 1)
    assert (cfg.optim.lr_ratio, cfg.data.op, cfg.train.seed) == (10.0, "add", 1)
    assert spec.swept == ["optim.lr_ratio", "data.op"]


def test_seed_list_and_no_arms() -> None:
    spec = parse_sweep({"seeds": [3, 7], "grid": {"train.batch_size": [8, 16, 32]}})
    members = expand(tiny_config(), spec)
    assert [(m.arm, m.seed) for m, _ in members][:2] == [("", 3), ("", 7)]
    assert len(members) == 6


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ({"seed": 3}, "unknown [sweep] key 'seed'"),
        ({"seeds": 0}, "sweep.seeds must be >= 1"),
        ({"seeds": "three"}, "sweep.seeds must be an int"),
        ({"seeds": [1, 1]}, "repeated seeds"),
        ({"grid": {"data.op": "add"}}, "must be a non-empty list"),
        ({"compare": "sgd", "arms": {"adam": {}}}, "sweep.compare 'sgd' is not an arm"),
        ({"tune": ["optim.lr"]}, "sweep.tune must list grid keys"),
        ({"grid": {"optim.lr": [1e-3]}, "arms": {"a": {"optim.lr": 1e-2}}}, "both by an arm and by the grid"),
    ],
)
def test_bad_sweep_tables(table: dict, needle: str) -> None:
    with pytest.raises(ConfigError, match=None) as e:
        parse_sweep(table, "x.toml")
    assert needle in str(e.value) and str(e.value).startswith("x.toml")


def test_bad_member_values_fail_before_anything_runs() -> None:
    spec = parse_sweep({"grid": {"data.op": ["add", "pow"]}})
    with pytest.raises(ConfigError, match="data.op: must be one of"):
        expand(tiny_config(), spec)
    spec = parse_sweep({"arms": {"a": {"optim.lrr": 1.0}}})
    with pytest.raises(ConfigError, match="unknown config key 'optim.lrr'"):
        expand(tiny_config(), spec)


def test_set_may_not_touch_swept_keys() -> None:
    spec = parse_sweep(TABLE)
    check_sets(spec, {"optim.lr": "0.1"})
    with pytest.raises(ConfigError, match="--set data.op"):
        check_sets(spec, {"data.op": "mul"})


def _group(tmp_path: Path, table: dict = TABLE, **over: object) -> Group:
    spec = parse_sweep(table)
    base = tiny_config(**over)
    return Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])


def test_group_roundtrip_and_results(tmp_path: Path) -> None:
    g = _group(tmp_path)
    assert g.dir.name.endswith("-tiny-sweep")
    doc = json.loads((g.dir / "group.json").read_text())
    assert len(doc["members"]) == 8 and doc["swept"] == ["optim.lr_ratio", "data.op"]
    g.record({"member": "m003", "status": "finished", "generalized_step": None, "final_val_acc": 0.5})
    g.record({"member": "m001", "status": "interrupted", "run_dir": "x-s1"})
    g2 = Group.open(g.dir)
    assert g2.config(g2.members[7]).optim.lr_ratio == 10.0
    with open(g.dir / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["member"] for r in rows] == ["m001", "m003"]  # member order, not arrival order
    assert rows[1]["data.op"] == "mul" and rows[1]["optim.lr_ratio"] == "1.0" and rows[1]["seed"] == "1"
    assert rows[1]["generalized_step"] == ""
    assert [m.id for m in g2.pending()] == [f"m{i:03d}" for i in range(8) if i != 3]
    assert json.loads((g.dir / "group.json").read_text())["members"][1]["run_dir"] == "x-s1"


def test_open_rejects_a_plain_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a sweep group directory"):
        Group.open(tmp_path)


def test_run_members_writes_run_dirs_and_rows(tmp_path: Path) -> None:
    """The batch seam, in-process: every member is a normal run directory inside the group."""
    g = _group(tmp_path, {"seeds": [0], "arms": {"ok": {}, "bad": {"train.device": "cuda:7"}}})
    specs = [member_spec(g, m) for m in g.members]
    msgs: list[tuple] = []
    import torch

    if torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    rows = run_members(specs, str(g.dir), msgs.append, lambda: False)
    ok, bad = rows
    assert ok["status"] == "finished" and ok["steps"] == 60 and (g.dir / ok["run_dir"] / "metrics.csv").exists()
    assert bad["status"] == "failed" and "CUDA" in bad["error"]
    assert msgs[0][:2] == ("started", "m000")


def test_run_members_stops_before_starting_more(tmp_path: Path) -> None:
    g = _group(tmp_path, {"seeds": [0, 1, 2]})
    specs = [member_spec(g, m) for m in g.members]
    assert run_members(specs, str(g.dir), None, lambda: True) == []
