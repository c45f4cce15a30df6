"""App. C.4's reading (engine/claims/studies/app_c4.py) on hand-made groups: the starved split's
members paired with the random split's kept beside them, cell by cell and seed by seed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from engine.claims.studies.app_c4 import BASELINE, app_c4
from engine.records.group_dir import Group, Member
from tests.engine.sweep.fakegroup import fake_group

GRID = {"seeds": 2, "grid": {"optim.lr": [0.01], "train.batch_size": [64, 128]}}
STEPS = [0, 100, 200]


def _flat(m: Member) -> dict[str, list[float]]:
    return {"val_acc": [0.0, 0.5, 0.9], "train_acc": [0.0, 1.0, 1.0]}


def _group(root: Path, name: str, gen: dict[int, int | None], val: float, **over: Any) -> Group:
    """A group named `name` under `root`: per batch size, the step each member reaches 95% val (or None)."""
    g = fake_group(root / (name + "-tmp"), GRID, _flat, STEPS, **over)
    for m in g.members:
        row = {"status": "finished", "steps": 200, "max_steps": 200, "run_dir": g.member_dir(m).name}
        g.record(
            {"member": m.id, **row, "generalized_step": gen[int(m.values["train.batch_size"])], "final_val_acc": val}
        )
    d = root / name
    shutil.move(str(g.dir), d)
    return Group.open(d)


def test_later_per_batch_paired_by_cell_and_seed(tmp_path: Path) -> None:
    _group(tmp_path, BASELINE, {64: None, 128: 100}, 0.99)
    starved = _group(tmp_path, "fig12_lr_batch_starved", {64: None, 128: 200}, 0.9, data__split="skewed")
    r = app_c4(starved)
    assert [(p.text, p.state) for p in r.parts] == [
        ("later than the random split at batch 64", "unread"),  # neither reaches: cannot tell
        ("later than the random split at batch 128", "holds"),
    ]
    assert r.values["val_lower_k"] == "4 of 4 pairs" and r.values["random_gen"] == "2 of 4"


def test_the_starved_split_sooner_is_read_as_the_opposite(tmp_path: Path) -> None:
    _group(tmp_path, BASELINE, {64: 200, 128: 200}, 0.99)
    starved = _group(tmp_path, "fig12_lr_batch_starved", {64: 100, 128: None}, 0.9, data__split="skewed")
    states = [p.state for p in app_c4(starved).parts]
    assert states == ["opposite", "holds"]  # batch 128: random reached, starved not by the budget: later


def test_pairs_that_differ_in_more_than_the_split_fail(tmp_path: Path) -> None:
    _group(tmp_path, BASELINE, {64: 100, 128: 100}, 0.99)
    starved = _group(tmp_path, "x", {64: 200, 128: 200}, 0.9, data__split="skewed", optim__weight_decay=0.5)
    shutil.move(str(starved.dir), tmp_path / "fig12_lr_batch_starved")
    r = app_c4(Group.open(tmp_path / "fig12_lr_batch_starved"))
    assert r.parts[-1].text == "the pairs differ in the split alone" and r.parts[-1].state == "fails"


def test_without_its_baseline_the_claim_is_unread(tmp_path: Path) -> None:
    starved = _group(tmp_path, "fig12_lr_batch_starved", {64: 200, 128: 200}, 0.9, data__split="skewed")
    assert [p.state for p in app_c4(starved).parts] == ["unread"]


def test_the_final_val_is_paired_within_a_cell(tmp_path: Path) -> None:
    """The same seed in another cell is another member: a gap read across cells would mix batch 64 with 128."""
    base = _group(tmp_path, BASELINE, {64: 100, 128: 100}, 0.99)
    for m in base.members:  # the random split ends at 0.5 at batch 64 and 0.99 at 128
        row = {"status": "finished", "steps": 200, "max_steps": 200, "run_dir": base.member_dir(m).name}
        val = 0.5 if m.values["train.batch_size"] == 64 else 0.99
        base.record({"member": m.id, **row, "generalized_step": 100, "final_val_acc": val})
    starved = _group(tmp_path, "fig12_lr_batch_starved", {64: 200, 128: 200}, 0.9, data__split="skewed")
    r = app_c4(starved)
    assert r.values["val_lower_k"] == "2 of 4 pairs"  # 0.9 above 0.5 at batch 64, below 0.99 at 128
    assert r.values["val_above"] == "2 at batch 64, lr 0.01"
