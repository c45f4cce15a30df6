"""Sweep reports: quantiles with unreached seeds, fraction generalized, arm ratios, tuning, CSV."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from engine.records.group_dir import Group
from engine.records.results import ResultsRow
from engine.records.stats import quantile, summarize
from engine.sweep.report.tables import build_tables, render, write_csv
from engine.sweep.spec import expand, parse_sweep
from tests.conftest import tiny_config


def test_quantile_matches_linear_interpolation_and_sorts_inf_last() -> None:
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([10, 20, 30, 40, 50], 0.25) == 20
    assert quantile([100, math.inf, 200], 0.5) == 200
    assert quantile([100, math.inf, math.inf], 0.5) == math.inf
    assert math.isnan(quantile([], 0.5))


def test_unreached_seeds_count_as_over_budget() -> None:
    rows = [
        {"status": "finished", "generalized_step": "300", "grokking_delay": "200", "final_val_acc": "1.0"},
        {"status": "finished", "generalized_step": "", "final_val_acc": "0.2", "max_steps": "900"},
        {"status": "finished", "generalized_step": "", "grokking_delay": "", "final_val_acc": "0.1"},
        {"status": "interrupted", "generalized_step": "100"},
    ]
    s = summarize([ResultsRow.of(r, []) for r in rows])  # results.csv's text, read as the report reads it
    assert (s["n"], s["ended"], s["generalized"], s["frac_generalized"]) == (4, 3, 1, 1 / 3)
    assert s["gen_median"] == math.inf and s["gen_q1"] == math.inf  # halfway between 300 and "never" is never
    assert s["delay_median"] == 200 and s["final_val_acc"] == 0.2 and s["budget"] == 900
    assert s["status"] == "1 interrupted"


def test_a_nan_generalized_step_is_not_generalized() -> None:
    """results.csv may hold `nan` (a member's summary written by an older engine): never measured."""
    s = summarize([ResultsRow.of({"status": "finished", "generalized_step": "nan", "max_steps": "500"}, [])])
    assert (s["generalized"], s["gen_median"]) == (0, math.inf)


def _group(tmp_path: Path, table: dict[str, Any], results: list[tuple[str, int | None]]) -> Group:
    spec = parse_sweep(table)
    base = tiny_config()
    g = Group.create(tmp_path, "t", base, spec, [m for m, _ in expand(base, spec)])
    for m, (mid, gen) in zip(g.members, results, strict=True):
        assert m.id == mid
        g.record(
            {
                "member": mid,
                "status": "finished",
                "memorized_step": 100,
                "generalized_step": gen,
                "grokking_delay": None if gen is None else gen - 100,
                "final_val_acc": 1.0 if gen else 0.3,
                "max_steps": 1000,
            }
        )
    return Group.open(g.dir)


ARMS = {"seeds": 3, "compare": "adam", "arms": {"adam": {"optim.lr_ratio": 1.0}, "adamlr": {"optim.lr_ratio": 10.0}}}


def test_arm_ratio_line(tmp_path: Path) -> None:
    res = [("m000", 1000), ("m001", 800), ("m002", 900), ("m003", 500), ("m004", 600), ("m005", None)]
    g = _group(tmp_path, ARMS, res)
    tables, lines = build_tables(g)
    assert [r["arm"] for r in tables[0].rows] == ["adam", "adamlr"]
    assert tables[0].rows[1]["generalized"] == 2
    # adamlr median over {500, 600, inf} = 600; adam median 900
    assert lines == ["adamlr reaches 95% val acc in 0.67× the steps of adam (600 vs 900) (2/3 seeds; adam 3/3)"]
    text = render(g)
    assert "600 [550, >1000]" in text and "2/3" in text and "comparison" in text


def test_tune_compares_each_arm_at_its_best_value(tmp_path: Path) -> None:
    table = {**ARMS, "seeds": 1, "tune": ["optim.lr"], "grid": {"optim.lr": [0.001, 0.01]}}
    g = _group(tmp_path, table, [("m000", 900), ("m001", 300), ("m002", 200), ("m003", None)])
    _, lines = build_tables(g)
    assert lines == [
        "adamlr reaches 95% val acc in 0.67× the steps of adam (200 vs 300) (1/1 seeds; adam 1/1) "
        "tuned optim.lr=0.001 vs 0.01"
    ]


def test_grid_gives_one_table_per_dimension_and_csv(tmp_path: Path) -> None:
    table = {**ARMS, "seeds": 1, "grid": {"data.op": ["add", "mul"]}}
    g = _group(tmp_path, table, [("m000", 400), ("m001", 800), ("m002", 200), ("m003", 200)])
    tables, lines = build_tables(g)
    assert [t.title.split(" (")[0] for t in tables] == ["every cell", "by arm", "by data.op"]
    assert len(lines) == 3 and lines[-1].startswith("adamlr vs adam: geometric mean ratio 0.35×")
    path = write_csv(g, tmp_path / "r.csv")
    assert path is not None
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["table"] for r in rows} == {t.title for t in tables} | {"comparison"}
    cell = next(r for r in rows if r["table"] == "every cell" and r["arm"] == "adam" and r["data.op"] == "mul")
    assert float(cell["gen_median"]) == 800 and cell["generalized"] == "1"


def test_cells_follow_member_order_whatever_order_the_members_ended_in(tmp_path: Path) -> None:
    """`grok sweep`'s closing report (its results in the order members ended) and `grok report` (results.csv)
    list the cells in member order, the order `grok sweep` starts them in; and the cells table's last
    evaluation is named apart from the final-value table's mean of the last evaluations."""
    table = {"seeds": 1, "compare": "zeta", "grid": {"data.op": ["mul", "add"]}}
    table["arms"] = {"zeta": {"optim.lr_ratio": 1.0}, "adamlr": {"optim.lr_ratio": 10.0}}
    g = _group(tmp_path, table, [("m000", 400), ("m001", 800), ("m002", 200), ("m003", 200)])
    want = [(m.arm, m.values["data.op"]) for m in g.members]
    assert want == [("zeta", "mul"), ("zeta", "add"), ("adamlr", "mul"), ("adamlr", "add")]
    g._results = dict(reversed(list(g.results().items())))  # as a sweep holds them: the last to end first
    main = build_tables(g)[0][0]
    assert [(r["arm"], r["data.op"]) for r in main.rows] == want
    from engine.sweep.report.tables import render

    text = render(g)
    assert "last val_acc" in text and "final val_acc" not in text
