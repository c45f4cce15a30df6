"""A cure study's table (engine/sweep/report/cures.py): each cure against its own cell, by hand."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from engine.config.presets import load_preset
from engine.records.group_dir import Group
from engine.sweep.report.cures import cells, cure_metrics, cure_rows
from engine.sweep.report.tables import build_tables, member_finals
from engine.sweep.spec import parse_sweep
from tests.engine.test_fork_sweep import run_whole, tiny_group

ARMS = ("adam_r1", "adam_r1_lazy", "adam_m1_r1", "adam_m1_r1_lazy", "adam_m1_r1_nowd")


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Group:
    p = load_preset("cure_decouple")
    arms = {a: t for a, t in parse_sweep(p.sweep, str(p.path)).arms.items() if a in ARMS}
    over = {
        "train.max_steps": 200,
        "train.patience": 0,
        "train.keep_every": 0,
        "probe.targets_every": 50,
        "data.starve_k": 3,
    }
    g = tiny_group(tmp_path_factory.mktemp("cures"), "cure_decouple", over, arms=arms)
    run_whole(g)
    return g


def test_each_cure_is_read_against_its_own_cell(study: Group) -> None:
    # not against the group's first arm (adam_r1): the report's paired lines would
    assert cells(study) == [
        ("adam_m1_r1", "adam_m1_r1_nowd", "nowd"),
        ("adam_m1_r1", "adam_m1_r1_lazy", "lazy"),
        ("adam_r1", "adam_r1_lazy", "lazy"),
    ]
    rows = {r["arm"]: r for r in cure_rows(study, member_finals(study, cure_metrics(study), 1))}
    finals = member_finals(study, ["val_acc_target", "target_norm"], 1)
    by = {(m.arm, m.seed): finals[m.id] for m in study.members}
    for cure in ("adam_m1_r1_lazy", "adam_m1_r1_nowd"):
        for k in ("val_acc_target", "target_norm"):
            d = [by[(cure, s)][k] - by[("adam_m1_r1", s)][k] for s in (0, 1)]
            assert rows[cure][f"{k} change"] == pytest.approx(sum(d) / 2, abs=1e-12)
            assert (rows[cure][f"{k} change_lo"], rows[cure][f"{k} change_hi"]) == pytest.approx((min(d), max(d)))
            assert rows[cure][f"{k} higher"] == f"{sum(x > 0 for x in d)}/2"
        assert rows[cure]["cell"] == "adam_m1_r1"
    # decay off on the target rows lengthens them against the same seed's untreated run
    assert rows["adam_m1_r1_nowd"]["target_norm change_lo"] > 0


def test_the_report_prints_the_cure_table(study: Group) -> None:
    tables, _ = build_tables(study, tail=1)
    t = next(t for t in tables if t.title.startswith("cures"))
    assert [r["arm"] for r in t.rows] == ["adam_m1_r1_nowd", "adam_m1_r1_lazy", "adam_r1_lazy"]


def test_a_group_not_laid_out_as_cells_by_cures_has_no_cure_table() -> None:
    # cure_skew_mul's arms: each is read against `compare = "adam"` by the report's paired lines instead;
    # fig10_rank's adam_wd5e-3 is named like a cure of adam, but adamlr is neither a cell nor a cure
    for name in ("cure_skew_mul", "fig10_rank"):
        p = load_preset(name)
        assert cells(SimpleNamespace(spec=parse_sweep(p.sweep, str(p.path)))) == []  # type: ignore[arg-type]
    one_cell = SimpleNamespace(spec=SimpleNamespace(arms={"adam": {}, "adam_lazy": {}}))
    assert cells(one_cell) == []  # type: ignore[arg-type]


def test_the_reading_has_a_part_per_starved_cell_and_the_costs(study: Group) -> None:
    """cure_decouple's status reading (engine/claims/studies/cure_decouple.py): lazy rows against each starved
    cell, then their cost to the common tokens and to the control (adam_r1), from the same pairs as the table."""
    from engine.claims.cause_pairs import TOL
    from engine.claims.studies.cure_decouple import CONTROL, cure_decouple

    r = cure_decouple(study)
    texts = [p.text for p in r.parts]
    assert texts[0] == "with one pair at r = 1, lazy rows raise the targets' accuracy"
    assert texts[1:] == [
        f"lazy rows cost the common tokens less than {TOL:g} in the starved cells",
        f"lazy rows cost the control (r = 1) less than {TOL:g} of val accuracy",
    ]
    finals = member_finals(study, ["val_acc_target", "val_acc"], 5)
    by = {(m.arm, m.seed): finals[m.id] for m in study.members}
    up = [by[("adam_m1_r1_lazy", s)]["val_acc_target"] > by[("adam_m1_r1", s)]["val_acc_target"] for s in (0, 1)]
    assert r.parts[0].evidence.startswith(f"{sum(up)} of 2 pairs higher")
    control = [by[(CONTROL + "_lazy", s)]["val_acc"] - by[(CONTROL, s)]["val_acc"] for s in (0, 1)]
    assert r.parts[2].evidence.startswith(f"{sum(d > -TOL for d in control)} of 2 pairs")
