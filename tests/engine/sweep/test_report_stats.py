"""`grok report`'s final values and paired tests on a hand-written group, where every number is known."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from engine.config import ConfigError
from engine.records.group_dir import Group, Member
from engine.records.paired import paired_lines
from engine.records.stats import paired, stratified_mean_ci, wilcoxon_p
from engine.sweep.report.tables import build_tables, member_finals, render, render_table, tail_mean, write_csv
from tests.engine.sweep.fakegroup import fake_group

STEPS = [10, 20, 30, 40, 50, 60, 70]
ARMS = {"seeds": 4, "compare": "adam", "arms": {"adam": {"optim.lr_ratio": 1.0}, "adamlr": {"optim.lr_ratio": 10.0}}}


def _curve(m: Member) -> dict[str, list[float]]:
    """val_acc rises to a plateau of 0.5 + 0.1·seed (+0.05 for adamlr, except seed 3: -0.02)."""
    bump = (0.05 if m.seed != 3 else -0.02) if m.arm == "adamlr" else 0.0
    top = 0.5 + 0.1 * m.seed + bump
    val = [top * (i + 1) / 4 if i < 3 else top for i in range(len(STEPS))]
    rare = [float("nan")] * 4 + [top / 2, float("nan"), top / 2 + 0.01]  # a probe-like column, NaN between
    return {"val_acc": val, "val_acc_rare": rare, "train_acc": [1.0] * len(STEPS)}


def test_tail_mean_skips_unmeasured_evaluations() -> None:
    nan = float("nan")
    assert tail_mean([1, 2, 3, 4, 5, 6], 3) == 5
    assert tail_mean([1, nan, 2, nan, 3], 2) == 2.5
    assert tail_mean([nan, nan], 5) is None
    assert tail_mean([4.0], 5) == 4.0


def test_member_finals_average_the_last_evaluations(tmp_path: Path) -> None:
    g = fake_group(tmp_path, ARMS, _curve, STEPS)
    finals = member_finals(g, tail=5)
    m = g.members[1]  # adam seed 1
    top = 0.6
    want = np.mean([top * 3 / 4, top, top, top, top])  # the last 5 of the 7 evaluations
    assert finals[m.id]["val_acc"] == pytest.approx(want)
    assert finals[m.id]["val_acc_rare"] == pytest.approx(top / 2 + 0.005)  # the two measured values
    assert set(finals[m.id]) == {"val_acc", "val_acc_rare"}  # train_acc is not a default final column
    assert member_finals(g, ["train_acc"], 1)[m.id] == {"train_acc": 1.0}
    with pytest.raises(ConfigError, match="no member logged val_loss"):
        member_finals(g, ["val_loss"])


def test_report_prints_intervals_and_paired_tests(tmp_path: Path) -> None:
    g = fake_group(tmp_path, ARMS, _curve, STEPS)
    tables, lines = build_tables(g, tail=2)
    (final,) = [t for t in tables if t.title.startswith("final value")]
    adam = [0.5 + 0.1 * s for s in range(4)]
    adamlr = [a + (0.05 if s != 3 else -0.02) for s, a in enumerate(adam)]
    assert [r["arm"] for r in final.rows] == ["adam", "adamlr"]
    # 4 seeds: the mean (0.5 + 0.6 + 0.7 + 0.8) / 4 = 0.65 and the range [0.5, 0.8], no interval
    assert (final.rows[0]["val_acc"], final.rows[0]["val_acc_lo"], final.rows[0]["val_acc_hi"]) == pytest.approx(
        (0.65, 0.5, 0.8), abs=1e-12
    )
    assert final.rows[0]["val_acc_n"] == 4 and final.rows[0]["val_acc_interval"] == "range"
    p = paired(adamlr, adam)
    assert p["wins"] == 3 and p["sign_p"] == pytest.approx(2 * 5 / 16)  # 3 of 4: P(X <= 1) = 5/16, doubled
    (line,) = [x for x in lines if x.startswith("val_acc: ")]
    # differences +0.05, +0.05, +0.05, -0.02: mean 0.13 / 4 = 0.0325, range [-0.02, +0.05]
    assert line == (
        "val_acc: adamlr - adam = +0.033 (range -0.020 to +0.050), 3/4 seeds higher, "
        f"sign p 0.625, Wilcoxon p {wilcoxon_p([0.05, 0.05, 0.05, -0.02]):.3g} (n=4)"
    )
    text = render(g, tail=2)
    assert "0.650 (0.500–0.800) n=4" in text
    assert "95% CI" not in text and "bootstrap" not in text
    assert "final value (mean of the last 2 evaluations)" in text and "val_acc_rare: adamlr - adam" in text
    assert "steps to 95% val: median [IQR]" in text  # the steps-to-95% table is still there
    md = render(g, "markdown")
    assert "| arm | val_acc | val_acc_rare |" in md


def test_from_8_seeds_the_final_value_has_a_t_interval(tmp_path: Path) -> None:
    """8 seeds of adam end at 0.5, 0.6, ..., 1.2: mean 0.85, s = 0.1 · sqrt(6) (as for 1..8), and the
    half-width t(0.975, 7) · s / sqrt(8) = 2.364624 · 0.244949 / 2.828427 = 0.204781."""
    g = fake_group(tmp_path, {**ARMS, "seeds": 8}, _curve, STEPS)
    tables, _ = build_tables(g, tail=2)
    (final,) = [t for t in tables if t.title.startswith("final value")]
    row = final.rows[0]
    assert row["arm"] == "adam" and row["val_acc_interval"] == "95% t-interval" and row["val_acc_n"] == 8
    assert (row["val_acc"], row["val_acc_lo"], row["val_acc_hi"]) == pytest.approx((0.85, 0.645219, 1.054781), abs=1e-5)
    assert "0.850 [0.645, 1.055] n=8" in render(g, tail=2)


def test_report_csv_has_the_interval_bounds(tmp_path: Path) -> None:
    g = fake_group(tmp_path, ARMS, _curve, STEPS)
    out = tmp_path / "r.csv"
    write_csv(g, out)
    text = out.read_text()
    assert "val_acc_lo" in text and "val_acc_hi" in text and "Wilcoxon p" in text


def test_grid_only_group_pairs_along_its_first_key(tmp_path: Path) -> None:
    table = {"seeds": 3, "grid": {"optim.lr": [0.001, 0.01], "data.op": ["add", "mul"]}}

    def curve(m: Member) -> dict[str, list[float]]:
        v = 0.4 + 0.1 * m.seed + (0.2 if m.values["optim.lr"] == 0.01 else 0.0)
        return {"val_acc": [v] * len(STEPS)}

    g = fake_group(tmp_path, table, curve, STEPS)
    rows = list(g.results().values())
    lines = paired_lines(g, rows, member_finals(g), 5)
    assert lines == [
        "val_acc: lr=0.01 - lr=0.001 = +0.200 (range +0.200 to +0.200), 3/3 seeds higher, sign p 0.25, Wilcoxon p 0.25 "
        f"(n=3) [op={op}]"
        for op in ("add", "mul")
    ]


def test_unpaired_seeds_are_left_out(tmp_path: Path) -> None:
    g = fake_group(tmp_path, ARMS, _curve, STEPS)
    rows = [r for r in g.results().values() if not (r["arm"] == "adam" and r["seed"] == 0)]
    (line, _) = paired_lines(g, rows, member_finals(g), 5)
    assert "(n=3)" in line


def test_a_note_when_early_stopping_cuts_into_the_tail(tmp_path: Path) -> None:
    g = fake_group(tmp_path, ARMS, _curve, STEPS, max_steps=1000, train__patience=3)
    _, lines = build_tables(g, tail=5)
    assert lines[-1] == (
        "note: 8 member(s) stopped early (train.patience 3): their last 5 evaluations include some before "
        "val_acc reached the stop rule's target; --tail 3 keeps only those after"
    )
    assert not build_tables(g, tail=3)[1][-1].startswith("note:")
    full = fake_group(tmp_path / "full", ARMS, _curve, STEPS, train__patience=3)  # ran its whole budget
    assert not build_tables(full, tail=5)[1][-1].startswith("note:")
    on_train = fake_group(tmp_path / "train", ARMS, _curve, STEPS, max_steps=1000, train__patience=3,
                          train__stop_metric="train_acc")  # fmt: skip
    assert "before train_acc reached the stop rule's target" in build_tables(on_train, tail=5)[1][-1]


def _record_steps(g: Group, steps: Mapping[tuple[str, int], float | None], budget: int) -> Group:
    for m in g.members:
        g.record(
            {
                "member": m.id,
                "status": "finished",
                "steps": budget if steps[(m.arm, m.seed)] is None else steps[(m.arm, m.seed)],
                "generalized_step": steps[(m.arm, m.seed)],
                "max_steps": budget,
                "run_dir": g.member_dir(m).name,
            }
        )
    return type(g).open(g.dir)


def test_steps_to_95_are_paired_by_seed(tmp_path: Path) -> None:
    """adamlr reaches 95% 300 steps sooner in seeds 0-2; seed 3's adamlr never does (counted at the budget)."""
    g = fake_group(tmp_path, ARMS, _curve, STEPS, max_steps=1000)
    adam = {0: 900, 1: 800, 2: 700, 3: 600}
    steps: dict[tuple[str, int], float | None] = {("adam", s): float(v) for s, v in adam.items()}
    steps |= {("adamlr", s): float(v - 300) for s, v in adam.items() if s != 3} | {("adamlr", 3): None}
    g = _record_steps(g, steps, 1000)
    _, lines = build_tables(g)
    (line,) = [x for x in lines if x.startswith("steps to 95% val: ")]
    # differences -300, -300, -300, +400 (1000 - 600): mean -125, range [-300, +400]; adamlr's seed 3 is at
    # least 1000, so the true difference is at least this: "≥"
    # ratios 600/900, 500/800, 400/700, 1000/600: geometric mean (0.3968...)^(1/4) = 0.794, range [0.57, 1.67]
    geo_mean = (600 * 500 * 400 * 1000 / (900 * 800 * 700 * 600)) ** 0.25
    assert geo_mean == pytest.approx(0.7937, abs=1e-4)
    assert line == (
        "steps to 95% val: adamlr - adam ≥ -125 (range -300 to +400), 3/4 seeds fewer, sign p 0.625, "
        f"Wilcoxon p {wilcoxon_p([-300, -300, -300, 400]):.3g} (n=4; 1 unreached counted at the budget, so a bound), "
        "ratio ≥ 0.79× (range 0.57 to 1.67)"
    )
    assert not [x for x in build_tables(fake_group(tmp_path / "none", ARMS, _curve, STEPS))[1] if "steps to" in x]


def test_a_censored_baseline_makes_an_upper_bound(tmp_path: Path) -> None:
    """The baseline's seed 3 never reaches 95%: counted at 1000, its true steps are more, so adamlr - adam
    is at most the shown difference."""
    g = fake_group(tmp_path, ARMS, _curve, STEPS, max_steps=1000)
    steps: dict[tuple[str, int], float | None] = {("adam", s): float(v) for s, v in enumerate([900, 800, 700])}
    steps[("adam", 3)] = None
    steps |= {("adamlr", s): float(v) for s, v in enumerate([600, 500, 400, 700])}
    (line,) = [x for x in build_tables(_record_steps(g, steps, 1000))[1] if x.startswith("steps to 95% val: ")]
    assert line.startswith("steps to 95% val: adamlr - adam ≤ -300 (range -300 to -300), 4/4 seeds fewer")
    assert "(n=4; 1 unreached counted at the budget, so a bound), ratio ≤ " in line
    both = dict(steps) | {("adamlr", 0): None}
    (line,) = [x for x in build_tables(_record_steps(g, both, 1000))[1] if x.startswith("steps to 95% val: ")]
    assert " adamlr - adam ≈ " in line
    assert "2 unreached counted at the budget, in both arms, so not even a bound" in line


def test_every_table_knows_where_the_members_stopped_and_the_report_says_it_once(tmp_path: Path) -> None:
    """The last step each member logged against max_steps: its median, and the range when they differ. Every
    table has it (a claim page shows a table alone); the whole report prints it in its first table only,
    not once more per table of the same cells."""
    g = fake_group(tmp_path, ARMS, _curve, STEPS, max_steps=1000)
    steps: dict[tuple[str, int], float | None] = {("adam", s): float(v) for s, v in enumerate([900, 800, 700, 600])}
    steps |= {("adamlr", s): float(v) for s, v in enumerate([600, 500, 400])} | {("adamlr", 3): None}
    g = _record_steps(g, steps, 1000)
    tables, _ = build_tables(g)
    assert len(tables) > 1
    for t in tables:
        assert all("stopped at" in r or "stop_median" in r for r in t.rows), t.title
        assert "stopped at" in render_table(t)
    for fmt in ("text", "markdown"):
        text = render(g, fmt)
        assert text.count("750 (600-900) of 1000") == 1  # adam: median of 600..900
        assert text.count("550 (400-1000) of 1000") == 1  # adamlr: 400, 500, 600 and the unreached seed's 1000
        assert text.count("stopped at") == 1


def test_the_report_opens_with_the_cells_and_k_of_n_per_cell(tmp_path: Path) -> None:
    """The headline under the title: how many cells of which dimensions, seeds and budget, then the cells
    grouped by how many of their seeds reached 95% val, most first."""
    table = {**ARMS, "grid": {"data.op": ["add", "mul"]}}
    g = fake_group(tmp_path, table, _curve, STEPS, max_steps=1000)
    reached: dict[str, list[int | None]] = {"adam": [100, 200, None, None], "adamlr": [100, 100, 100, 100]}
    steps = {(m.arm, m.seed): reached[m.arm][m.seed] for m in g.members}
    for m in g.members:
        gen = None if m.arm == "adam" and g.config(m).data.op == "mul" else steps[(m.arm, m.seed)]
        g.record({"member": m.id, "status": "finished", "steps": 1000, "generalized_step": gen, "max_steps": 1000})
    g = type(g).open(g.dir)
    head = render(g).split("\n")[1:6]
    assert head == [
        "4 cells (arm/data.op: 2 × 2), 4 seeds each, up to 1000 steps; reached 95% val in:",
        "  4 of 4 seeds: adamlr/add, adamlr/mul",
        "  2 of 4 seeds: adam/add",
        "  0 of 4 seeds: adam/mul",
        "",
    ]
    md = render(g, "markdown").split("\n")
    assert md[2].startswith("4 cells (arm/data.op") and md[3] == "- 4 of 4 seeds: adamlr/add, adamlr/mul"


def test_the_steps_ratio_is_pooled_over_cells(tmp_path: Path) -> None:
    """Two tasks at different paces: per task and pooled, adamlr / adam as a geometric mean with its range."""
    table = {**ARMS, "seeds": 3, "grid": {"data.op": ["add", "mul"]}}
    g = fake_group(tmp_path, table, _curve, STEPS, max_steps=4000)
    adam = {"add": [1000, 1200, 1400], "mul": [2000, 2400, 2800]}
    ratio = {"add": 0.5, "mul": 0.8}
    for m in g.members:
        op = g.config(m).data.op
        gen = adam[op][m.seed] * (ratio[op] if m.arm == "adamlr" else 1)
        g.record({"member": m.id, "status": "finished", "generalized_step": gen, "max_steps": 4000})
    g = type(g).open(g.dir)
    lines = [x for x in build_tables(g)[1] if x.startswith("steps to 95% val")]
    assert "ratio = 0.50× (range 0.50 to 0.50) [op=add]" in lines[0]
    assert "ratio = 0.80× (range 0.80 to 0.80) [op=mul]" in lines[1]
    # 3 seeds a task: the geometric mean sqrt(0.5 · 0.8) = 0.632 with the range of the 6 ratios, no interval
    assert lines[-1] == "steps to 95% val: adamlr / adam, 2 cells pooled = 0.63× (range 0.50 to 0.80), 6/6 seeds fewer"


def test_the_pooled_ratio_resamples_within_each_task(tmp_path: Path) -> None:
    """8 seeds a task: the pooled ratio's interval is the stratified bootstrap of the log ratios, task by task."""
    table = {**ARMS, "seeds": 8, "grid": {"data.op": ["add", "mul"]}}
    g = fake_group(tmp_path, table, _curve, STEPS, max_steps=10**6)
    base = {"add": 1000, "mul": 3000}
    ratio = {"add": [0.5, 0.6, 0.55, 0.45, 0.5, 0.7, 0.4, 0.5], "mul": [0.9, 0.8, 1.0, 0.85, 0.95, 0.9, 0.75, 0.9]}
    for m in g.members:
        op = g.config(m).data.op
        gen = base[op] * (ratio[op][m.seed] if m.arm == "adamlr" else 1)
        g.record({"member": m.id, "status": "finished", "generalized_step": gen, "max_steps": 10**6})
    lines = [x for x in build_tables(type(g).open(g.dir))[1] if x.startswith("steps to 95% val")]
    logs = [np.log(ratio["add"]).tolist(), np.log(ratio["mul"]).tolist()]
    m, lo, hi = (np.exp(v) for v in stratified_mean_ci(logs))
    assert lines[-1] == (
        f"steps to 95% val: adamlr / adam, 2 cells pooled = {m:.2f}× [95% stratified bootstrap {lo:.2f}, {hi:.2f}], "
        "15/16 seeds fewer"  # mul seed 2 ties (ratio 1.0)
    )
    # per task, 8 seeds: the t-interval of the log ratios, exponentiated
    add = np.log(ratio["add"])
    half = 2.364624251593 * add.std(ddof=1) / np.sqrt(8)  # t(0.975, 7 df), from a table
    want = f"ratio = {np.exp(add.mean()):.2f}× [95% t-interval {np.exp(add.mean() - half):.2f}, "
    assert want in lines[0] and lines[0].endswith("[op=add]")


def test_a_baseline_other_than_the_compare_arm(tmp_path: Path) -> None:
    """--baseline adamlr pairs adam against adamlr: the same differences with the sign turned."""
    g = fake_group(tmp_path, ARMS, _curve, STEPS)
    finals = member_finals(g)
    rows = list(g.results().values())
    (usual,) = [x for x in paired_lines(g, rows, finals, 5) if x.startswith("val_acc:")]
    (turned,) = [x for x in paired_lines(g, rows, finals, 5, baseline="adamlr") if x.startswith("val_acc:")]
    diff = usual.split(" = ")[1].split(" ")[0]  # "+0.031"
    assert usual.startswith("val_acc: adamlr - adam = +")
    assert turned.startswith(f"val_acc: adam - adamlr = -{diff[1:]} ")
    assert "3/4 seeds higher" in usual and "1/4 seeds higher" in turned
    compare = [x for x in build_tables(g, baseline="adamlr")[1] if "reached" in x]
    assert compare == ["adam: neither arm's median seed reached 95% val acc (0/4 seeds; adamlr 0/4)"]
    with pytest.raises(ConfigError, match="--baseline sgd: not a value of arm in this group; values: adam, adamlr"):
        paired_lines(g, rows, finals, 5, baseline="sgd")
