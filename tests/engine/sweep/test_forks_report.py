"""The interventions' table (engine/sweep/report/forks.py): fork arms against the runs they fork, by seed."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from engine.records.group_dir import Group, Member
from engine.sweep.report.forks import intervention_rows
from engine.sweep.report.tables import render
from tests.engine.sweep.fakegroup import fake_group

STEPS = [100, 200, 300]
FORK_AT = 200  # the fork step: the parent's value there is "before", whatever it logs after it


def _group(tmp_path: Path) -> Group:
    table = {
        "seeds": 3,
        "arms": {"starved": {"train.target_rate": 0.1}},
        "fork_at": str(FORK_AT),
        "forks": {"rescaled": {"from": "starved", "intervene": ["rescale:targets=ring"]}},
    }

    def curve(m: Member) -> dict[str, list[float]]:
        # the parent: 0.5 + 0.1·seed at the fork step, then 0.9 (a later value "before" must not read)
        return {"val_acc_target": [0.1, 0.5 + 0.1 * m.seed, 0.9], "target_norm": [1.0, 0.3, 0.2]}

    g = fake_group(tmp_path, table, curve, STEPS, data__starve_k=2)
    for m in g.members:
        if not m.fork_of:
            continue
        d = g.member_dir(m)
        after = {0: 0.9, 1: 0.5, 2: 1.0}[m.seed]  # seed 1 loses 0.1, seeds 0 and 2 gain
        with open(d / "metrics.csv", "w", newline="") as fh:  # the fork's own rows: one at the fork step, then its own
            w = csv.writer(fh)
            w.writerow(["step", "epoch", "val_acc_target", "target_norm"])
            w.writerow([FORK_AT, 20, 0.5 + 0.1 * m.seed, 0.3])
            w.writerow([FORK_AT + 1, 20, after, ""])  # a probe not logged at the last step: its last logged value
            if m.seed != 2:
                w.writerow([FORK_AT + 2, 20, after, 1.0])
        doc = json.loads((d / "summary.json").read_text())
        (d / "summary.json").write_text(json.dumps({**doc, "fork_step": FORK_AT}))
    return Group.open(g.dir)


def test_before_is_the_parent_at_the_fork_step_after_the_forks_last_value(tmp_path: Path) -> None:
    (row,) = intervention_rows(_group(tmp_path), ["val_acc_target", "target_norm"])
    assert (row["arm"], row["from"]) == ("rescaled", "starved")
    assert row["val_acc_target before"] == pytest.approx(0.6)  # 0.5, 0.6, 0.7 at step 200, not the parents' 0.9
    assert row["val_acc_target after"] == pytest.approx((0.9 + 0.5 + 1.0) / 3)
    assert row["val_acc_target change"] == pytest.approx((0.4 - 0.1 + 0.3) / 3)
    assert (row["val_acc_target change_lo"], row["val_acc_target change_hi"]) == pytest.approx((-0.1, 0.4))
    assert row["val_acc_target higher"] == "2/3"
    # seed 2 logged no target_norm after the fork: it drops out of that metric's pairs, not out of the table
    assert row["target_norm after_n"] == 2
    assert row["target_norm higher"] == "2/2"


def test_report_prints_the_interventions_table(tmp_path: Path) -> None:
    out = render(_group(tmp_path), fmt="markdown", tail=1)
    section = out[out.index("**interventions") :]
    line = next(ln for ln in section.splitlines() if ln.startswith("| rescaled |"))
    assert "| starved |" in line
    assert "0.600 (0.500–0.700) n=3" in line  # before, the range below 8 seeds
    assert "| 2/3 |" in line
