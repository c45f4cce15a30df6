"""The progress measures' reading (engine/claims/studies/progress.py) on hand-made runs: the crossing
order, ‖θ‖² over the jump and the rare tokens' place among the last to join are chosen by the test."""

from __future__ import annotations

import math
from pathlib import Path

from engine.claims.studies.progress import progress
from engine.records.group_dir import Member
from tests.engine.sweep.fakegroup import fake_group

STEPS = list(range(0, 1100, 100))
P = 97
HALF = math.log(P) / 2


def _curve(m: Member) -> dict[str, list[float]]:
    """Memorized at step 100, val from 10% at 500 to 95% at 800; the restricted loss crosses half of chance
    at 300 and the test loss at 600 (seed 0), or the other way round (seed 1); ‖θ‖² falls over the jump."""
    first, second = (300, 600) if m.seed == 0 else (600, 300)
    n = len(STEPS)
    return {
        "train_acc": [0.0] + [1.0] * (n - 1),
        "val_acc": [0.0 if s < 500 else 0.1 if s < 800 else 0.96 for s in STEPS],
        "restricted_loss": [HALF - 1 if s >= first else HALF + 1 for s in STEPS],
        "val_loss": [HALF - 1 if s >= second else HALF + 1 for s in STEPS],
        "weight_sq": [100.0 - (s / 100 if s >= 500 else 0) for s in STEPS],
        "train_loss": [1.0] * n,
    }


def test_each_part_read_per_run(tmp_path: Path) -> None:
    table = {"seeds": 2, "arms": {"starved": {"data.starve_k": 2}}}
    g = fake_group(tmp_path, table, _curve, STEPS, data__p=P)
    for m in g.members:  # 4 tokens, 2 rare: rare last in seed 0, first in seed 1
        rows = (
            [(0, 1, 900), (1, 1, 800), (2, 0, 200), (3, 0, 300)]
            if m.seed == 0
            else [(0, 1, 100), (1, 1, 200), (2, 0, 800), (3, 0, 900)]
        )
        text = "token,rare,join_step\n" + "".join(f"{t},{r},{s}\n" for t, r, s in rows)
        (g.member_dir(m) / "joins.csv").write_text(text)
    r = progress(g)
    assert [p.state for p in r.parts] == ["fails", "holds", "fails"]
    assert r.parts[0].evidence == "first in 1 of 2 runs"
    assert r.parts[2].evidence.startswith("share among the last 2 above chance (0.021) in 1 of 2 runs")
