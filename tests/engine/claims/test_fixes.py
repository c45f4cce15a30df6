"""The fixes' readings (engine/claims/studies/adaptive.py, fixes.py) on hand-made groups whose answers are known:
adaptive Adam-LR against Adam and c = 10 per task, and the fixes on a token-starved split with the twin
task's group kept beside it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from engine.claims.readings import Row
from engine.claims.studies.adaptive import adaptive, no_later
from engine.claims.studies.fixes import TWIN, fixes
from engine.records.group_dir import Group, Member
from engine.records.results import ResultsRow
from tests.engine.sweep.fakegroup import fake_group

STEPS = [0, 100, 200, 300]
FIX_STEPS = [100 * i for i in range(10)]  # the last 5 (the final value's tail) after every rise


def _row(arm: str, seed: int, gen: float | None) -> Row:
    m = Member(id=f"{arm}{seed}", arm=arm, values={}, seed=seed, overrides={})
    return Row(m, "finished", gen, 300, {}, {}, ResultsRow())


def test_no_later_counts_a_tie_and_reads_a_pair_neither_reached_as_undecided() -> None:
    a = [_row("a", 0, 200), _row("a", 1, 300), _row("a", 2, None), _row("a", 3, 100), _row("a", 4, None)]
    b = [_row("b", 0, 200), _row("b", 1, 200), _row("b", 2, None), _row("b", 3, None), _row("b", 4, 300)]
    o = no_later(a, b)
    assert list(o.agree) == [True, False, None, True, False]
    assert list(o.opposite) == [False, True, False, False, True]


# --- adaptive: fig6_adaptive's design, two tasks and two seeds ---------------------------------------

ADAPTIVE_ARMS: dict[str, dict[str, Any]] = {
    "adaptive_once": {"optim.adaptive": True, "optim.adaptive_once": True},
    "adaptive_every": {"optim.adaptive": True, "optim.adaptive_every": 100},
    "adam": {"optim.lr_ratio": 1.0},
    "c10": {"optim.lr_ratio": 10.0},
}
# the step each member reaches 95% val (None: not by the budget), by (arm, task) and seed:
# c once is sooner than Adam on add in both seeds, later on mul in seed 1; c recomputed is later than Adam
# everywhere; against c = 10, c once ties (no later) on add and is later on mul in seed 0
GEN: dict[tuple[str, str], list[int | None]] = {
    ("adaptive_once", "add"): [100, 200],
    ("adaptive_once", "mul"): [300, 300],
    ("adaptive_every", "add"): [300, None],
    ("adaptive_every", "mul"): [None, None],
    ("adam", "add"): [200, 300],
    ("adam", "mul"): [None, 200],
    ("c10", "add"): [100, 200],
    ("c10", "mul"): [200, 300],
}
C = {"adaptive_once": [1.0, 9.0, 9.0, 9.0], "adaptive_every": [1.0, 0.3, 0.5, 0.7]}


def _c_curve(m: Member) -> dict[str, list[float]]:
    c = C.get(m.arm, [float(m.overrides.get("optim.lr_ratio", 1.0))] * len(STEPS))
    raw = list(c)
    if m.arm == "adaptive_every" and m.seed == 0 and m.values["data.op"] == "add":
        raw[1] = 0.001  # below the clamp: lr_ratio (the c it trained with) differs from c_raw once
    return {"val_acc": [0.0, 0.5, 0.9, 0.99], "train_acc": [0.5, 1.0, 1.0, 1.0], "lr_ratio": c, "c_raw": raw}


def _adaptive_group(tmp_path: Path, arms: dict[str, dict[str, Any]] = ADAPTIVE_ARMS) -> Group:
    table = {"seeds": 2, "grid": {"data.op": ["add", "mul"]}, "arms": arms, "compare": "adam"}
    g = fake_group(tmp_path, table, _c_curve, STEPS)
    for m in g.members:
        gen = GEN[(m.arm, str(m.values["data.op"]))][m.seed]
        unfit = m.arm == "adaptive_every" and m.seed == 1 and m.values["data.op"] == "mul"
        g.record(
            {
                "member": m.id,
                "status": "finished",
                "steps": 300,
                "max_steps": 300,
                "run_dir": g.member_dir(m).name,
                "generalized_step": gen,
                "memorized_step": None if unfit else 100,
            }
        )
    return Group.open(g.dir)


def test_adaptive_reads_each_reading_against_adam_per_task_and_against_c10(tmp_path: Path) -> None:
    r = adaptive(_adaptive_group(tmp_path))
    assert [(p.text, p.state) for p in r.parts] == [
        ("c computed once: sooner than Adam on add", "holds"),
        ("c computed once: sooner than Adam on mul", "fails"),  # seed 0: only c once reached; seed 1: later
        ("c computed once: no later than c = 10", "fails"),  # add ties in both seeds; mul later in seed 0
        ("c recomputed: sooner than Adam on add", "opposite"),  # later in seed 0, never in seed 1
        ("c recomputed: sooner than Adam on mul", "fails"),  # seed 0 cannot tell, seed 1 Adam only
        ("c recomputed: no later than c = 10", "opposite"),
    ]
    assert r.parts[2].evidence.startswith("3 of 4 pairs no later") and "add 2 of 2, mul 1 of 2" in r.parts[2].evidence
    v = r.values
    assert (v["once_on"], v["once_not"], v["every_on"]) == ("add", "mul", "no task")
    assert (v["once_k"], v["every_k"], v["c10_k"]) == (
        "3 of 4",
        "0 of 4 (1 undecided: neither side reached 95% val by the budget)",
        "3 of 4",
    )
    # c as trained (lr_ratio after step 0): once constant, recomputed from its lowest to its last
    assert v["once_c_last"] == "9.00 (9.00–9.00, 4 members)"
    assert (v["every_c_low"], v["every_c_last"]) == ("0.30 (0.30–0.30, 4 members)", "0.70 (0.70–0.70, 4 members)")
    assert v["every_c_high"] == "0.70 (0.70–0.70, 4 members)"  # below 1 throughout
    assert (v["every_clamped"], v["once_clamped"]) == ("1 of 4", "0 of 4")
    assert v["unfit"] == "adaptive_every on mul (seed 1)"
    assert (v["once_reach"], v["adam_reach"]) == ("4 of 4", "3 of 4")
    assert r.seeds_tasks == "2 × 2 (add, mul)"


def test_adaptive_leaves_out_pairs_that_differ_in_more_than_c(tmp_path: Path) -> None:
    arms = dict(ADAPTIVE_ARMS, adaptive_once={**ADAPTIVE_ARMS["adaptive_once"], "optim.weight_decay": 0.5})
    r = adaptive(_adaptive_group(tmp_path, arms))
    assert r.parts[-1].text == "the arms differ in how c is set alone" and r.parts[-1].state == "fails"
    assert r.parts[-1].evidence.startswith("8 pairs differ in more")  # c once against Adam and c = 10, 2 × 2 each
    assert r.parts[0].state == "unread" and r.parts[0].evidence == "no pair of seeds differs in how c is set alone"


# --- fixes: skew_fixes_mul with skew_fixes_add kept beside it -----------------------------------------

FIX_ARMS: dict[str, dict[str, Any]] = {
    "adam": {"optim.lr_ratio": 1.0},
    "adamlr_c10": {"optim.lr_ratio": 10.0},
    "adaptive": {"optim.adaptive": True},
    "balanced": {"train.sampler": "balanced"},
    "gradient": {"train.sampler": "gradient"},
    "replacement": {"train.sampler": "replacement"},
    "balanced_epochs": {"train.sampler": "balanced_epochs"},
}
# final (val_acc, val_acc_rare) by task, arm and seed. mul: Adam-LR below Adam in both seeds; the balanced
# sampler above its control in both but below Adam in seed 1; the gradient sampler above both; balanced epochs
# above Adam in seed 0 only. add: the balanced sampler above both in both seeds, nothing else above.
FINAL: dict[str, dict[str, list[tuple[float, float]]]] = {
    "mul": {
        "adam": [(0.90, 0.70), (0.92, 0.75)],
        "adamlr_c10": [(0.88, 0.60), (0.91, 0.70)],
        "adaptive": [(0.89, 0.65), (0.93, 0.72)],
        "balanced": [(0.91, 0.80), (0.90, 0.78)],
        "gradient": [(0.95, 0.85), (0.96, 0.86)],
        "replacement": [(0.85, 0.60), (0.88, 0.62)],
        "balanced_epochs": [(0.91, 0.74), (0.92, 0.80)],
    },
    "add": {
        "adam": [(0.90, 0.70), (0.92, 0.75)],
        "adamlr_c10": [(0.90, 0.70), (0.91, 0.74)],
        "adaptive": [(0.85, 0.60), (0.93, 0.80)],
        "balanced": [(0.95, 0.90), (0.96, 0.92)],
        "gradient": [(0.89, 0.71), (0.90, 0.74)],
        "replacement": [(0.91, 0.72), (0.90, 0.73)],
    },
}


def _fix_group(root: Path, name: str, op: str, arms: dict[str, dict[str, Any]]) -> Group:
    """A group named `name` under `root` whose members end at FINAL[op] (flat over their last 5 evaluations);
    Adam-LR rises to 80% val at step 100, Adam at 200, adaptive at 300."""
    rise = {"adamlr_c10": 1, "adam": 2, "adaptive": 3}

    def curve(m: Member) -> dict[str, list[float]]:
        val, rare = FINAL[op][m.arm][m.seed]
        at = rise.get(m.arm, 2)
        n = len(FIX_STEPS)
        return {
            "val_acc": [0.1 if i < at else val for i in range(n)],
            "val_acc_rare": [rare] * n,
            "val_acc_common": [1.0 if m.arm == "adam" else 0.99] * n,
            "train_acc": [1.0] * n,
        }

    table = {"seeds": 2, "arms": arms, "compare": "adam"}
    g = fake_group(root / (name + "-tmp"), table, curve, FIX_STEPS, data__op=op)
    d = root / name
    shutil.move(str(g.dir), d)
    return Group.open(d)


def _states(r: Any) -> list[tuple[str, str]]:
    return [(p.text, p.state) for p in r.parts]


def test_fixes_reads_each_fix_against_adam_and_the_samplers_against_their_control(tmp_path: Path) -> None:
    mul = _fix_group(tmp_path, "skew_fixes_mul", "mul", FIX_ARMS)
    _fix_group(tmp_path, TWIN, "add", {k: v for k, v in FIX_ARMS.items() if k != "balanced_epochs"})
    r = fixes(mul)
    control = "its control (draws with replacement)"
    assert _states(r) == [
        ("mul: Adam-LR (c = 10) above plain Adam", "opposite"),
        ("mul: adaptive Adam-LR above plain Adam", "fails"),
        (f"mul: the balanced sampler above {control}", "holds"),
        ("mul: the balanced sampler above plain Adam", "fails"),
        (f"mul: the gradient sampler above {control}", "holds"),
        ("mul: the gradient sampler above plain Adam", "holds"),
        ("mul: balanced epochs above plain Adam", "fails"),
        ("add: Adam-LR (c = 10) above plain Adam", "fails"),  # a tie in seed 0: neither higher nor lower
        ("add: adaptive Adam-LR above plain Adam", "fails"),
        (f"add: the balanced sampler above {control}", "holds"),
        ("add: the balanced sampler above plain Adam", "holds"),
        (f"add: the gradient sampler above {control}", "fails"),
        ("add: the gradient sampler above plain Adam", "opposite"),
    ]
    v = r.values
    assert v["mul_balanced_replacement"] == "+0.040 (+0.020 to +0.060, n = 2)"
    assert v["mul_balanced_adam_rare"] == "+0.065 (+0.030 to +0.100, n = 2)"
    assert v["mul_balanced_adam_common"] == "−0.010 (−0.010 to −0.010, n = 2)"
    # what replacement costs by itself (a value, not a part): below Adam in both seeds
    assert (v["mul_replacement_adam"], v["mul_replacement_adam_k"]) == ("−0.045 (−0.050 to −0.040, n = 2)", "0 of 2")
    assert v["held"] == (
        "the balanced sampler on mul (above its control); the gradient sampler on mul (above its control and "
        "Adam); the balanced sampler on add (above its control and Adam)"
    )
    assert (v["mul_best"], v["mul_best_k"], v["add_best"]) == ("gradient", "2 of 2", "balanced")
    # the figure's rise: Adam-LR at 80% val before Adam in both seeds, adaptive after
    assert (v["mul_adamlr_c10_rise_k"], v["mul_adaptive_rise_k"]) == ("2 of 2", "0 of 2")
    assert (v["mul_adamlr_c10_rise"], v["mul_adam_rise"]) == ("100", "200")
    assert v["twin_kept"] == "not a kept group"
    assert r.seeds_tasks == "2 × 2 (mul, add)"


def test_fixes_without_the_twin_beside_it_leaves_the_twin_unread(tmp_path: Path) -> None:
    r = fixes(_fix_group(tmp_path, "skew_fixes_mul", "mul", FIX_ARMS))
    assert r.parts[-1].text == f"the fixes on {TWIN}'s task" and r.parts[-1].state == "unread"
    assert not any(p.text.startswith("add:") for p in r.parts) and r.seeds_tasks == "2 × 1 (mul)"


def test_fixes_leaves_out_pairs_that_differ_in_more_than_the_fix(tmp_path: Path) -> None:
    arms = dict(FIX_ARMS, balanced={"train.sampler": "balanced", "optim.weight_decay": 0.5})
    r = fixes(_fix_group(tmp_path, "skew_fixes_mul", "mul", arms))
    assert _states(r)[-1] == ("the arms differ in the fix alone", "fails")
    assert r.parts[-1].evidence.startswith("4 pairs differ in more")  # balanced against its control and Adam
    balanced = [p for p in r.parts if "balanced sampler" in p.text]
    assert all(p.state == "unread" for p in balanced)
