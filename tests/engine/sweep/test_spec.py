"""Sweep expansion, member directory names, the group directory and results.csv."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from engine.config import ConfigError
from engine.records.group_dir import Group, Member, member_fields
from engine.sweep.spec import check_sets, expand, parse_sweep
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
def test_bad_sweep_tables(table: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError, match=None) as e:
        parse_sweep(table, "x.toml")
    assert needle in str(e.value) and str(e.value).startswith("x.toml")


def test_bad_member_values_fail_before_anything_runs() -> None:
    spec = parse_sweep({"grid": {"data.op": ["add", "pow"]}})
    with pytest.raises(ConfigError, match=r"data\.op: must be one of"):
        expand(tiny_config(), spec)
    spec = parse_sweep({"arms": {"a": {"optim.lrr": 1.0}}})
    with pytest.raises(ConfigError, match=r"unknown config key 'optim\.lrr'"):
        expand(tiny_config(), spec)


def test_set_may_not_touch_swept_keys() -> None:
    spec = parse_sweep(TABLE)
    check_sets(spec, {"optim.lr": "0.1"})
    with pytest.raises(ConfigError, match=r"--set data\.op"):
        check_sets(spec, {"data.op": "mul"})


def _group(tmp_path: Path, table: dict[str, Any] = TABLE, **over: object) -> Group:
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
    # seed by seed (every cell's seed 0 first), member order within a seed: a sweep stopped early leaves whole seeds
    assert [(m.seed, m.id) for m in g2.pending()] == sorted((m.seed, m.id) for m in g2.members if m.id != "m003")
    assert [m.seed for m in g2.pending()] == [0, 0, 0, 0, 1, 1, 1]
    assert json.loads((g.dir / "group.json").read_text())["members"][1]["run_dir"] == "x-s1"


def test_open_rejects_a_plain_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a sweep group directory"):
        Group.open(tmp_path)


def test_member_directories_carry_arm_grid_cell_and_seed(tmp_path: Path) -> None:
    g = _group(tmp_path)
    names = [d["dir"] for d in json.loads((g.dir / "group.json").read_text())["members"]]
    assert names[:3] == ["m000-adam-op=add-s0", "m001-adam-op=add-s1", "m002-adam-op=mul-s0"]
    assert names[-1] == "m007-adamlr-op=mul-s1"
    assert len(set(names)) == len(names)
    assert g.member_dir(g.members[5]) == g.dir / "m005-adamlr-op=add-s1"
    assert Group.open(g.dir).member_dir(g.members[5]) == g.dir / "m005-adamlr-op=add-s1"  # stored, not recomputed


def test_member_directory_names_are_safe_and_bounded() -> None:
    odd = Member("m012", "a/b c", {"optim.lr": 1e-05, "model.bias": True, "data.op": "x;rm -rf"}, 3, {})
    assert odd.dir_name() == "m012-a_b_c-lr=1e-05-bias=true-op=x_rm_-rf-s3"
    long = Member("m013", "arm", {"data.op": "x" * 300}, 0, {})
    assert len(long.dir_name()) == 120 and long.dir_name().startswith("m013-arm-op=xxx")


def test_member_fields_map_member_directories_to_arm_and_grid(tmp_path: Path) -> None:
    g = _group(tmp_path)
    for m in g.members[:2]:
        g.member_dir(m).mkdir()
    fields = member_fields(g.dir)
    assert list(fields) == [g.dir / "m000-adam-op=add-s0", g.dir / "m001-adam-op=add-s1"]  # only those that exist
    one = fields[g.dir / "m001-adam-op=add-s1"]
    assert one == {"group": g.dir.name, "arm": "adam", "member": "m001", "optim.lr_ratio": 1.0, "data.op": "add"}
