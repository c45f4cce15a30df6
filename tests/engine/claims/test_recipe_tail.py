"""The tail study's reading (engine/claims/studies/recipe_tail.py) on hand-made deciles where every answer is known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.claims.studies.recipe_tail import (
    deciles,
    flattest,
    gap,
    head_part,
    narrows_part,
    premise_part,
    raises_part,
    recipe_tail,
    table,
)
from engine.claims.verdicts import FAILS, HOLDS, UNREAD
from engine.records.group_dir import Member
from tests.engine.sweep.fakegroup import fake_group

SEEDS = 3
PLAIN = [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55]  # head 1.0, tail 0.55: a gap of 0.45


def _curve(m: Member) -> dict[str, list[float]]:
    return {"val_acc": [0.9] * 3}


def _deciles(m: Member) -> dict[str, Any]:
    """adam: the plain tail falls to 0.55; lazy rows lift the tail to 0.85 (gap 0.15); E out of decay is flat
    at 0.95 (gap 0) but costs the head 0.05; equal rows also change the lr (not the recipe's contrast).
    adamw: flat at 1.0 with and without lazy rows (no gap to narrow). Seed s adds s / 1000 to every decile."""
    e = m.seed / 1000
    d = {
        "adam": PLAIN,
        "adam_lazy": [1.0, *PLAIN[1:8], 0.9, 0.85],
        "adam_e0": [0.95] * 10,
        "adam_equal": [1.0] * 10,
        "adamw": [1.0] * 10,
        "adamw_lazy": [1.0] * 10,
    }[m.arm]
    return {"decile_val_acc": [x + e for x in d], "decile_draw_share": [0.1] * 10}


def _group(tmp_path: Path) -> Any:
    arms = {
        "adam": {},
        "adam_lazy": {"optim.lazy_rows": True},
        "adam_e0": {"optim.decay_sets": "E=0"},
        "adam_equal": {"optim.equal_rows": True, "optim.lr": 0.002},
        "adamw": {"optim.name": "adamw"},
        "adamw_lazy": {"optim.name": "adamw", "optim.lazy_rows": True},
    }
    return fake_group(tmp_path, {"seeds": SEEDS, "arms": arms}, _curve, [10, 20, 30], summary=_deciles)


def test_deciles_pair_each_recipe_with_its_plain_arm_and_drop_a_member_that_differs_in_more(tmp_path) -> None:
    ds = deciles(_group(tmp_path))
    arms = {a for a, _ in ds}
    assert arms == {"adam", "adam_lazy", "adam_e0", "adamw", "adamw_lazy"}  # adam_equal also changes the lr
    assert ds[("adam", 2)][0] == 1.002 and round(gap(ds[("adam", 2)]), 9) == 0.45


def test_parts_read_the_gap_the_head_and_the_premise(tmp_path) -> None:
    ds = deciles(_group(tmp_path))
    assert premise_part(ds, "adam", SEEDS).state == HOLDS
    assert premise_part(ds, "adamw", SEEDS).state == FAILS  # flat: nothing for a recipe to narrow
    assert narrows_part(ds, "adam", "lazy", SEEDS).state == HOLDS
    assert "gap narrowed by +0.300" in narrows_part(ds, "adam", "lazy", SEEDS).evidence
    assert head_part(ds, "adam", "lazy", SEEDS).state == HOLDS
    assert head_part(ds, "adam", "e0", SEEDS).state != HOLDS  # the head loses 0.05 in every seed
    assert narrows_part(ds, "adam", "lazy", SEEDS + 1).state == UNREAD  # a fourth seed has not ended
    assert narrows_part(ds, "adamw", "lazy", SEEDS).state == FAILS  # a gap of 0 is not narrowed


def test_the_flattest_recipe_is_one_that_costs_the_head_nothing(tmp_path) -> None:
    ds = deciles(_group(tmp_path))
    assert flattest(ds, "adam", SEEDS) == "lazy rows"  # E out of decay is flatter but costs the head
    assert flattest(ds, "adamw", SEEDS) == "none"  # every curve flat: no recipe is flatter than the plain arm
    t = table(ds)
    assert t.count("\n") == 1 + 5 and "| adam | plain | 3 |" in t and "| adam | E out of decay | 3 |" in t


def test_the_tail_part_reads_the_tail_decile_seed_by_seed(tmp_path) -> None:
    ds = deciles(_group(tmp_path))
    up = raises_part(ds, "adam", "lazy", SEEDS)
    assert up.state == HOLDS and "tail change: +0.300" in up.evidence  # 0.55 -> 0.85 in every seed
    assert raises_part(ds, "adamw", "lazy", SEEDS).state == FAILS  # flat at 1.0: not raised
    assert raises_part(ds, "adam", "lazy", SEEDS + 1).state == UNREAD


def test_the_reading_holds_four_parts_per_optimizer_and_names_the_tails(tmp_path) -> None:
    r = recipe_tail(_group(tmp_path))
    assert len(r.parts) == 8
    assert r.values["adam_tail"].startswith("0.551") and r.values["adam_lazy_tail_k"] == "3 of 3"
