"""Sweeps of forks: the two study presets on tiny variants, run whole by the sweep's pool."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from engine.config import ConfigError, apply_overrides
from engine.config.presets import load_preset
from engine.records.group_dir import Group
from engine.sweep.events import MemberEnded
from engine.sweep.pool import Sweep
from engine.sweep.spec import expand, parse_sweep

TINY = {
    "data.p": 11,
    "model.d_embed": 8,
    "train.batch_size": 16,
    "train.eval_every": 20,
    "train.device": "cpu",
    "train.threads": 1,
}


def rows(d: Path, upto: int) -> list[dict[str, str]]:
    with open(d / "metrics.csv") as fh:
        return [{k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader(fh) if int(r["step"]) <= upto]


def tiny_group(tmp_path: Path, name: str, over: dict[str, Any], **spec_changes: Any) -> Group:
    p = load_preset(name)
    spec = dataclasses.replace(parse_sweep(p.sweep, str(p.path)), seeds=(0, 1), **spec_changes)
    base = apply_overrides(p.config, {**TINY, **over})
    return Group.create(tmp_path, name, base, spec, [m for m, _ in expand(base, spec)])


def run_whole(g: Group) -> dict[str, dict[str, Any]]:
    """Every member, parents then forks, in one worker: the pool's own promises with two workers are
    tests/engine/sweep/test_pool.py's; each worker process costs a torch import (about 2 CPU-s) per round."""
    ended = {e.member: e.row for e in Sweep(g, workers=1).events() if isinstance(e, MemberEnded)}
    assert set(ended) == {m.id for m in g.members}
    return ended


def test_fork_adamlr_at_memorization_tiny(tmp_path: Path) -> None:
    g = tiny_group(tmp_path, "fork_adamlr_at_memorization", {"train.max_steps": 400, "train.patience": 0})
    assert [m.arm for m in g.members] == ["adam"] * 2 + ["adamlr"] * 2 + ["switch"] * 2
    ended = run_whole(g)
    assert {r["status"] for r in ended.values()} == {"finished"}
    for m in g.members[4:]:
        parent = g.member(m.fork_of)
        pd, fd = g.member_dir(parent), g.member_dir(m)
        s, ps = json.loads((fd / "summary.json").read_text()), json.loads((pd / "summary.json").read_text())
        assert s["fork_step"] == ps["memorized_step"] and s["memorized_step"] == ps["memorized_step"]
        assert s["parent"] == pd.name and json.loads((fd / "config.json").read_text())["optim"]["lr_ratio"] == 10.0
        assert rows(fd, s["fork_step"]) == rows(pd, s["fork_step"])  # the parent's history up to M


def test_fork_feed_starved_tiny(tmp_path: Path) -> None:
    over = {"train.max_steps": 120, "data.starve_k": 2, "train.keep_every": 20, "data.frac_train": 0.4}
    g = tiny_group(tmp_path, "fork_feed_starved", over, fork_at="60")
    assert [m.arm for m in g.members] == ["starved"] * 2 + ["feed"] * 2 + ["feed_rescaled"] * 2
    ended = run_whole(g)
    assert {r["status"] for r in ended.values()} == {"finished"}
    by_arm = {m.arm: m for m in g.members if m.seed == 0}
    summaries = {a: json.loads((g.member_dir(m) / "summary.json").read_text()) for a, m in by_arm.items()}
    assert [e["kind"] for e in summaries["feed_rescaled"]["interventions"]] == ["rescale", "set"]
    assert [e["target"] for e in summaries["feed"]["interventions"]] == ["train.add_pairs"]
    assert summaries["feed"]["fork_step"] == 60 and summaries["feed"]["steps"] == 120
    configs = {a: json.loads((g.member_dir(m) / "config.json").read_text()) for a, m in by_arm.items()}
    assert {a: c["train"]["add_pairs"] for a, c in configs.items()} == {
        "starved": "",
        "feed": "targets",
        "feed_rescaled": "targets",
    }
    # the forks share their parent's history up to the fork step, and part after it
    parent = g.member_dir(by_arm["starved"])
    assert rows(g.member_dir(by_arm["feed"]), 60) == rows(parent, 60)
    assert rows(g.member_dir(by_arm["feed"]), 120) != rows(parent, 120)
    assert configs["feed"]["_meta"]["n_train"] > configs["starved"]["_meta"]["n_train"]  # the fed training set


def test_a_window_trains_each_fork_as_many_steps_after_its_phase(tmp_path: Path) -> None:
    """At a phase each seed forks at its own step: `window` gives every fork the same steps after it, and the
    plan counts the window (engine/sweep/spec.py trained_steps)."""
    from engine.sweep.spec import trained_steps

    spec = parse_sweep(load_preset("fork_adamlr_at_memorization").sweep)
    forks = {"switch": {**spec.forks["switch"], "window": 50}}
    g = tiny_group(tmp_path, "fork_adamlr_at_memorization", {"train.max_steps": 400, "train.patience": 0}, forks=forks)
    assert [trained_steps(g.spec, m, g.config(m)) for m in g.members] == [400] * 4 + [50] * 2
    ended = run_whole(g)
    assert {r["status"] for r in ended.values()} == {"finished"}
    for m in g.members[4:]:
        s = json.loads((g.member_dir(m) / "summary.json").read_text())
        assert s["steps"] == s["fork_step"] + 50
        assert json.loads((g.member_dir(m) / "config.json").read_text())["train"]["max_steps"] == s["fork_step"] + 50


def test_fork_member_whose_parent_never_reached_the_phase_fails_with_a_reason(tmp_path: Path) -> None:
    g = tiny_group(tmp_path, "fork_adamlr_at_memorization", {"train.max_steps": 20, "optim.lr": 1e-5})
    ended = run_whole(g)
    fails = [r for m, r in ended.items() if r["status"] == "failed"]
    assert len(fails) == 2 and all("never memorized: nothing to fork" in r["error"] for r in fails)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"forks": {"f": {}}}, "fork_at and \\[sweep.forks.NAME\\] go together"),
        ({"fork_at": "soon", "forks": {"f": {}}}, "fork_at must be memorized, generalized or a step"),
        ({"fork_at": 10, "arms": {"a": {}}, "forks": {"f": {"from": "b"}}}, "from must name an arm"),
        ({"fork_at": 10, "forks": {"f": {"data.p": 13}}}, "data.p: cannot change mid-run"),
        ({"fork_at": 10, "forks": {"f": {"intervene": ["grow:1"]}}}, "expected KIND:WHAT"),
        ({"fork_at": 10, "forks": {"f": {"from": "*"}}}, 'from must name an arm or be "\\*"'),
        ({"fork_at": 10, "arms": {"a": {}, "a_f": {}}, "forks": {"f": {"from": "*"}}}, "makes a name an arm"),
        ({"fork_at": 10, "forks": {"f": {"window": -5}}}, "window must be a whole number of steps"),
        ({"fork_at": 10, "forks": {"f": {"window": 5, "train.max_steps": 20}}}, "sets window and train.max_steps"),
    ],
)
def test_bad_fork_tables_are_one_line(table: dict[str, Any], message: str) -> None:
    from engine.config import RunConfig

    with pytest.raises(ConfigError, match=message):
        expand(RunConfig(), parse_sweep(table, "x.toml"), "x.toml")


def test_a_fork_from_every_arm_is_an_arm_per_parent_arm() -> None:
    """`from = "*"`: one fork arm per parent arm, named PARENT_FORK, each forking its own parent's members."""
    from engine.config import RunConfig

    table = {"seeds": 2, "fork_at": 10, "arms": {"a": {}, "b": {"optim.lr": 0.002}}, "forks": {"f": {"from": "*"}}}
    spec = parse_sweep(table, "x.toml")
    members = [m for m, _ in expand(RunConfig(), spec, "x.toml")]
    by_id = {m.id: m for m in members}
    forks = [m for m in members if m.fork_of]
    assert sorted({m.arm for m in forks}) == ["a_f", "b_f"]
    assert all(by_id[m.fork_of].arm + "_f" == m.arm and by_id[m.fork_of].seed == m.seed for m in forks)
    assert spec.fork_table("b_f") is spec.forks["f"]
    assert [a for a, _, _ in spec.fork_arms()] == ["a_f", "b_f"]
