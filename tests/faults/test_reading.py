"""Issue 20: every field of summary.json, config.json and group.json that a face uses is checked on
read (engine/rundir/schema.py). A crafted value of the wrong type or outside its range is one ConfigError
naming the file and the field, for `grok show`, `grok ls`, the TUI's --open and a group's readers,
never a traceback nor a wrong number on screen."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.config import ConfigError
from engine.records.group_dir import Group
from engine.records.run import read_run
from engine.rundir import GROUP_FILE
from engine.rundir.schema import CONFIG, GROUP, MEMBER
from engine.summary import RunSummary
from engine.sweep.spec import expand, parse_sweep
from grok_tui.commands.ls import entries
from grok_tui.rundata import load_run
from tests.conftest import grok, tiny_config
from tests.faults.conftest import finished_run, one_error

# field -> crafted values, each wrong in type or range; every field the readers check has its cases
BAD_SUMMARY: dict[str, list[Any]] = {
    "status": ["done", 3, None],
    "steps": [-1, "60", True, 1.5],
    "max_steps": [0, "60"],
    "wall_s": [-1.0, "1.0", math.nan],
    "steps_per_s": [-2.0, math.inf],
    "device": [5],
    "preset": [["tiny"]],
    "seed": [1.5, "0"],
    "memorized_step": ["20", -5],
    "generalized_step": [-1, 2.5],
    "grokking_delay": [2.5, "7"],
    "early_stop_step": ["x"],
    "final_train_acc": [1.5, "0.9"],
    "final_val_acc": [-0.1, {}],
    "best_val_acc": [2, math.nan],
    "error": [7],
    "rare_tokens": [[1, -2], "3"],
    "absent_tokens": [[0.5]],
    "target_tokens": [{}],
    "train_pairs": [[True, 2], None],
    "draw_share": [["0.1"], 0.5],
    "decile_val_acc": [["0.9"], 0.9],
    "decile_draw_share": [[None], "0.1"],
    "circuit_step": [-3, "40"],
    "cleanup_step": [1.5],
    "c_clamped": [-1, None],
    "cuda_graph": [1],
    "batched": [0],
    "coverage": [1.5, "1"],
    "rare_k": [-1],
    "target_pairs": [[-1]],
    "target_rate": ["2"],
    "target_draw_ratio": [math.inf],
    "learned_acc": [2.0, None],
    "learned_step": [[1, "2"], [-1]],
    "target_shared_pairs": [-1, 0.5],
    "target_batch_share": [1.5],
    "parent": [5],  # a fork's lineage (docs/FORK.md)
    "fork_step": [-1, "20"],
    "ancestors": [[1], "x"],
    "interventions": [["rescale"], {}],
    "optimizer_state": [3],
}
BAD_CONFIG: dict[str, list[Any]] = {
    "preset": [5],
    "description": [1],
    "train": [[], "x"],
    "train.max_steps": [0, "300", 2.5],
    "train.seed": ["0"],
    "train.patience": [-1],
    "train.target_val_acc": [2, "0.99"],
    "_meta": ["x"],
    "_meta.created": [1],
    "_meta.device": [None],
    "_meta.n_train": [-3],
    "_meta.n_test": ["5"],
    "_meta.token_freq": [[1, -2], "12"],
}
BAD_GROUP: dict[str, list[Any]] = {
    "preset": [1],
    "description": [[]],
    "created": [0],
    "base": ["adam"],
    "sweep": [[1]],
    "sweep.seeds": ["0,1", [0.5]],
    "swept": ["train.seed", [1]],
    "members": [{}, [1]],
}
BAD_MEMBER: dict[str, list[Any]] = {
    "id": ["", 3],
    "arm": [None],
    "seed": ["1"],
    "values": [[]],
    "overrides": ["x"],
    "dir": ["../elsewhere", "", "a/b"],
    "run_dir": ["..", "/etc"],
}


def cases(bad: dict[str, list[Any]]) -> list[Any]:
    return [pytest.param(k, v, id=f"{k}={v!r}") for k, vs in bad.items() for v in vs]


def test_every_checked_field_has_a_fault_case() -> None:
    assert set(BAD_SUMMARY) == set(RunSummary.__dataclass_fields__) - {"extra"}
    assert set(BAD_CONFIG) == set(CONFIG)
    assert set(BAD_GROUP) == set(GROUP)
    assert set(BAD_MEMBER) == set(MEMBER)


def put(doc: dict[str, Any], key: str, value: Any) -> None:
    *parents, last = key.split(".")
    for p in parents:
        doc = doc[p]
    doc[last] = value


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return finished_run(tmp_path_factory.mktemp("good"))


def crafted(good_run: Path, tmp_path: Path, name: str, key: str, value: Any) -> Path:
    d = Path(shutil.copytree(good_run, tmp_path / good_run.name))
    doc = json.loads((d / name).read_text())
    put(doc, key, value)
    (d / name).write_text(json.dumps(doc))
    return d


def test_the_engine_writes_what_its_readers_accept(good_run: Path) -> None:
    rec = read_run(good_run)
    assert rec.status == "finished" and rec.summary.steps == 60 and rec.meta["n_train"] > 0


@pytest.mark.parametrize(("key", "value"), cases(BAD_SUMMARY))
def test_a_crafted_summary_field_is_one_error_naming_file_and_field(
    good_run: Path, tmp_path: Path, key: str, value: Any
) -> None:
    d = crafted(good_run, tmp_path, "summary.json", key, value)
    want = f"{d / 'summary.json'}: {key}: must be "
    with pytest.raises(ConfigError, match="^" + re.escape(want)):
        read_run(d)  # grok show, export
    with pytest.raises(ConfigError, match=re.escape(want)):
        load_run(d)  # the TUI's --open and compare
    with pytest.raises(ConfigError, match=re.escape(want)):
        entries(d)  # grok ls on the run
    listed = entries(tmp_path)  # grok ls on the directory above: listed as unreadable, with the reason
    assert [(e["status"], e["error"].startswith(want)) for e in listed] == [("unreadable", True)]


@pytest.mark.parametrize(("key", "value"), cases(BAD_CONFIG))
def test_a_crafted_config_field_is_one_error_naming_file_and_field(
    good_run: Path, tmp_path: Path, key: str, value: Any
) -> None:
    d = crafted(good_run, tmp_path, "config.json", key, value)
    want = f"{d / 'config.json'}: {key}: must be "
    for read in (read_run, load_run, entries):
        with pytest.raises(ConfigError, match="^" + re.escape(want)):
            read(d)


@pytest.fixture(scope="module")
def good_group(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = parse_sweep({"seeds": 2})
    base = tiny_config()
    return Group.create(tmp_path_factory.mktemp("group"), "tiny", base, spec, [m for m, _ in expand(base, spec)]).dir


def crafted_group(good_group: Path, tmp_path: Path, edit: Any) -> Path:
    g = Path(shutil.copytree(good_group, tmp_path / good_group.name))
    doc = json.loads((g / GROUP_FILE).read_text())
    edit(doc)
    (g / GROUP_FILE).write_text(json.dumps(doc))
    return g


@pytest.mark.parametrize(("key", "value"), cases(BAD_GROUP))
def test_a_crafted_group_field_is_one_error_naming_file_and_field(
    good_group: Path, tmp_path: Path, key: str, value: Any
) -> None:
    g = crafted_group(good_group, tmp_path, lambda doc: put(doc, key, value))
    with pytest.raises(ConfigError, match="^" + re.escape(f"{g / GROUP_FILE}: {key}: must be ")):
        Group.open(g)


@pytest.mark.parametrize(("key", "value"), cases(BAD_MEMBER))
def test_a_crafted_member_field_is_one_error_naming_file_and_member(
    good_group: Path, tmp_path: Path, key: str, value: Any
) -> None:
    g = crafted_group(good_group, tmp_path, lambda doc: put(doc["members"][1], key, value))
    with pytest.raises(ConfigError, match="^" + re.escape(f"{g / GROUP_FILE}: members[1].{key}: must be ")):
        Group.open(g)


@pytest.mark.parametrize("key", ["base", "members"])
def test_a_group_file_missing_a_part_says_which(good_group: Path, tmp_path: Path, key: str) -> None:
    g = crafted_group(good_group, tmp_path, lambda doc: doc.pop(key))
    with pytest.raises(ConfigError, match=re.escape(f"{g / GROUP_FILE}: {key}: missing")):
        Group.open(g)


def test_a_member_id_twice_is_an_error(good_group: Path, tmp_path: Path) -> None:
    g = crafted_group(good_group, tmp_path, lambda doc: put(doc["members"][1], "id", doc["members"][0]["id"]))
    with pytest.raises(ConfigError, match=re.escape("members[1].id: ") + ".* appears twice"):
        Group.open(g)


def test_a_control_character_in_a_bad_value_is_escaped(good_run: Path, tmp_path: Path) -> None:
    d = crafted(good_run, tmp_path, "summary.json", "status", "\x1b[2J\x1b]0;pwned\x07")
    with pytest.raises(ConfigError) as e:
        read_run(d)
    assert "\x1b" not in str(e.value) and "\\x1b" in str(e.value)


# --- the CLI: one line `error: FILE: ...`, exit 2 ---------------------------------------------------


def test_grok_show_on_a_crafted_summary(good_run: Path, tmp_path: Path) -> None:
    d = crafted(good_run, tmp_path, "summary.json", "final_val_acc", "97%")
    one_error(grok("show", str(d)), f"error: {d / 'summary.json'}: final_val_acc: must be a number in [0, 1]")


def test_grok_ls_on_a_crafted_config(good_run: Path, tmp_path: Path) -> None:
    d = crafted(good_run, tmp_path, "config.json", "train.max_steps", "lots")
    one_error(grok("ls", str(d)), f"error: {d / 'config.json'}: train.max_steps: must be a whole number ≥ 1")


def test_grok_ls_and_report_on_a_crafted_group(good_group: Path, tmp_path: Path) -> None:
    g = crafted_group(good_group, tmp_path, lambda doc: put(doc["members"][0], "dir", "../../outside"))
    want = f"error: {g / GROUP_FILE}: members[0].dir: must be a directory name"
    one_error(grok("ls", str(g)), want)
    one_error(grok("report", str(g)), want)


def test_grok_tui_open_on_a_crafted_summary(good_run: Path, tmp_path: Path) -> None:
    d = crafted(good_run, tmp_path, "summary.json", "status", "winning")
    one_error(grok("tui", "--open", str(d)), f"error: {d / 'summary.json'}: status: must be one of running")


@pytest.mark.parametrize(
    ("name", "header"), [("tokens.csv", "step,token,updates,grad_norm,val_acc"), ("fourier.csv", "step,freq,norm")]
)
def test_a_crafted_event_csv_row_is_one_error_naming_the_file(
    good_run: Path, tmp_path: Path, name: str, header: str
) -> None:
    d = Path(shutil.copytree(good_run, tmp_path / good_run.name))
    (d / name).write_text(f"{header}\n{','.join(['x'] * len(header.split(',')))}\n")
    # a closed run's log is held to the writer's guarantees first (docs/ENGINE.md): the step names the row
    with pytest.raises(ConfigError, match="^" + re.escape(f"{d / name}: row 2: step 'x' is not a whole number")):
        load_run(d)  # the TUI's --open and compare decode it into events
