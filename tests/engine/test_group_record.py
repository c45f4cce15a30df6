"""engine/records/group.py: a group's curves per arm × grid cell, with the one rule for members that stopped
early, and `grok plot`, the compare view and `grok figure` drawing the same mean from them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from engine.records.group import read_group
from engine.records.group_dir import Group, SweepSpec
from engine.records.stats import seed_interval
from engine.sweep.spec import expand
from grok_tui.commands.plot import group_chart
from grok_tui.figures.data import group_curves
from grok_tui.groupdata import load_group
from tests.conftest import tiny_config

ARMS = {"adam": {"optim.lr_ratio": 1.0}, "adamlr": {"optim.lr_ratio": 10.0}}
# member -> (status in its summary.json, val_acc at steps 0, 50, 100, ... as far as it got)
MEMBERS = {
    # adam: seed 0 stopped early on patience at step 100 (finished); seed 1 ran to the budget; seed 2 was
    # interrupted at step 100 (no value is assumed past that)
    "m000": ("finished", [0.1, 0.96, 1.0]),
    "m001": ("finished", [0.1, 0.2, 0.4, 0.7, 0.98]),
    "m002": ("interrupted", [0.1, 0.3, 0.5]),
    # adamlr: every seed stopped early, at different steps
    "m003": ("finished", [0.2, 1.0]),
    "m004": ("finished", [0.1, 0.6, 0.97]),
    "m005": ("finished", [0.3, 0.5, 0.9, 0.99]),
}
STEPS = [0.0, 50.0, 100.0, 150.0, 200.0]


@pytest.fixture(scope="module")
def group_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tiny_config(data__p=7, train__max_steps=200, train__eval_every=50, train__patience=2)
    spec = SweepSpec(seeds=(0, 1, 2), compare="adam", arms=ARMS)
    group = Group.create(tmp_path_factory.mktemp("sweeps"), "tiny", base, spec, [m for m, _ in expand(base, spec)])
    for m in group.members:
        status, accs = MEMBERS[m.id]
        d = group.member_dir(m)
        d.mkdir()
        (d / "config.json").write_text(json.dumps(group.config(m).to_dict()))
        rows = "".join(f"{50 * i},{1 - a},{a}\n" for i, a in enumerate(accs))
        (d / "metrics.csv").write_text("step,train_loss,val_acc\n" + rows)
        (d / "summary.json").write_text(json.dumps({"status": status, "steps": 50 * (len(accs) - 1)}))
    return group.dir


def expected(ids: list[str]) -> list[list[float]]:
    """The values counted at each step a member of the cell logged: a finished member's last value held
    past its end, others not."""
    out = []
    for i in range(max(len(MEMBERS[k][1]) for k in ids)):
        vals = []
        for k in ids:
            status, accs = MEMBERS[k]
            if i < len(accs):
                vals.append(accs[i])
            elif status == "finished":
                vals.append(accs[-1])
        out.append(vals)
    return out


def test_a_finished_member_holds_its_last_value_and_an_interrupted_one_does_not(group_dir: Path) -> None:
    adam, adamlr = read_group(group_dir).curves("val_acc")
    assert (adam.label, adamlr.label) == ("adam", "adamlr") and adam.n == adamlr.n == 3
    assert adam.max_steps == 200 and list(adam.steps) == STEPS and list(adamlr.steps) == STEPS[:4]
    for cell, ids in ((adam, ["m000", "m001", "m002"]), (adamlr, ["m003", "m004", "m005"])):
        for i, vals in enumerate(expected(ids)):
            sp = seed_interval(vals)  # 3 seeds: the range, as grok report gives it
            assert cell.mean[i] == pytest.approx(sp.mean, abs=1e-12)
            assert (cell.lo[i], cell.hi[i]) == pytest.approx((sp.lo, sp.hi), abs=1e-12)
            assert (cell.min[i], cell.max[i]) == (min(vals), max(vals))
    # at step 200 the adam mean is seed 0's held 1.0 and seed 1's 0.98: not seed 1 alone, and not seed 2
    assert adam.mean[-1] == pytest.approx(0.99, abs=1e-12)


def test_plot_compare_and_figure_give_the_same_mean_at_every_step(group_dir: Path) -> None:
    engine_cells = read_group(group_dir).curves("val_acc")
    plot = group_chart(group_dir, ["val_acc"]).series  # grok plot
    compare = load_group(group_dir, "val_acc").cells  # the TUI's compare view
    figure = group_curves(read_group(group_dir), "val_acc")  # grok figure
    assert len(plot) == len(compare) == len(figure) == len(engine_cells) == 2
    for cell, p, c, f in zip(engine_cells, plot, compare, figure, strict=True):
        assert p.steps == c.steps.tolist() == f.x == cell.steps.tolist()
        assert p.values == c.mean.tolist() == f.y == cell.mean.tolist()
        assert all(math.isfinite(v) for v in p.values)


def test_group_metrics_are_one_long_table(group_dir: Path) -> None:
    g = read_group(group_dir)
    cols = g.metrics
    n_rows = sum(len(accs) for _, accs in MEMBERS.values())
    assert all(len(v) == n_rows for v in cols.values())
    assert list(cols)[:3] == ["member", "arm", "seed"]
    assert cols["val_acc"].dtype == np.float64 and cols["seed"].dtype.kind == "i"
    first = cols["member"] == "m001"
    assert cols["val_acc"][first].tolist() == MEMBERS["m001"][1] and set(cols["arm"][first]) == {"adam"}
