"""The quick decoupling's reading (engine/claims/studies/decouple.py) on hand-made groups: the targets'
accuracy and the realized draws per cell are chosen by the test."""

from __future__ import annotations

import json
from pathlib import Path

from engine.claims.studies.decouple import decouple
from engine.records.group_dir import Group, Member
from tests.engine.sweep.fakegroup import fake_group

STEPS = [0, 100, 200]
GRID = {"data.starve_m": [1, 3, -1], "train.target_rate": [0.1, 1.0, 0.0]}
ACC = {(1, 0.1): 0.2, (1, 1.0): 0.6, (1, 0.0): 0.5, (3, 0.1): 0.3, (3, 1.0): 0.9, (3, 0.0): 0.9}
ACC |= {(-1, 0.1): 0.95, (-1, 1.0): 0.95, (-1, 0.0): 0.99}  # every pair: draws change nothing


def _key(m: Member) -> tuple[int, float]:
    return int(m.values["data.starve_m"]), float(m.values["train.target_rate"])


def _group(tmp_path: Path, draws: dict[tuple[int, float], float]) -> Group:
    def curve(m: Member) -> dict[str, list[float]]:
        return {"val_acc": [0.5] * 3, "val_acc_target": [ACC[_key(m)]] * 3}

    table = {"seeds": 3, "grid": GRID, "arms": {"mul_adam": {"data.op": "mul"}}}
    g = fake_group(tmp_path, table, curve, STEPS, data__starve_k=2)
    for m in g.members:
        path = g.member_dir(m) / "summary.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "target_draw_ratio": draws[_key(m)]}))
    return g


def _draws(m_: int, r: float) -> float:
    """Realized draws as the design intends: r scales them; matched (r = 0) is the median token's, 1."""
    return 1.0 if r == 0 else {1: 0.016, 3: 0.047, -1: 1.0}[m_] * r


def test_each_factor_per_task_where_the_draws_are_as_named(tmp_path: Path) -> None:
    r = decouple(_group(tmp_path, {k: _draws(*k) for k in ACC}))
    states = {p.text: p.state for p in r.parts}
    assert states == {
        "mul adam: with one pair, fewer draws lower the targets": "holds",
        "mul adam: with three pairs, fewer draws lower the targets": "holds",
        "mul adam: with every pair, fewer draws lower the targets": "fails",  # equal: no fall
        "mul adam: at matched draws, one pair lowers the targets": "holds",
    }
    assert r.values["mul_adam_draws_m1"].startswith("−0.400")


def test_a_contrast_whose_draws_are_not_as_named_is_unread(tmp_path: Path) -> None:
    draws = {k: _draws(*k) for k in ACC}
    draws[(1, 0.0)] = 3.0  # "matched" drew one pair three times the median token's share: not pairs alone
    draws[(3, 0.1)] = draws[(3, 1.0)] / 1.5  # "fewer draws" barely fewer
    r = decouple(_group(tmp_path, draws))
    assert [p.text for p in r.parts] == [
        "mul adam: with one pair, fewer draws lower the targets",
        "mul adam: with every pair, fewer draws lower the targets",
    ]
    assert "three pairs" in r.values["unread"] and "matched draws" in r.values["unread"]
