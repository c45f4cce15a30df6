"""Fig. 4's readings (engine/claims/studies/claim2.py, token_skew.py, fig4_epochs.py) on hand-made groups whose
answer is known: each reader must pair the right arms (same seed, task and batch), read the right direction, and
leave a part unread where the budget cannot tell."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.claims.studies.claim2 import fig4_sampling
from engine.claims.studies.fig4_epochs import fig4_epochs
from engine.claims.studies.token_skew import FLAT, token_skew
from engine.claims.verdicts import FAILS, HOLDS, OPPOSITE, UNREAD, ceiling
from engine.records.group_dir import Group, Member
from tests.engine.sweep.fakegroup import fake_group

STEPS = [0, 100, 200, 300, 400]
BUDGET = STEPS[-1]


def _group(
    tmp_path: Path,
    table: dict[str, Any],
    curve: Callable[[Member], dict[str, list[float]]],
    result: Callable[[Group, Member], dict[str, Any]],
    **base: Any,  # tiny_config's overrides, passed through fake_group
) -> Group:
    """A group whose metrics are `curve(member)` and whose results.csv row is `result(group, member)` (gen, stop,
    memorized), recorded over fake_group's (which says no member generalized)."""
    g = fake_group(tmp_path, table, curve, STEPS, **base)
    for m in g.members:
        row = {"status": "finished", "steps": BUDGET, "max_steps": BUDGET, "memorized_step": 0}
        row |= result(g, m)
        g.record({"member": m.id, "run_dir": g.member_dir(m).name, **row})
    return Group.open(g.dir)


def _const(**cols: float) -> dict[str, list[float]]:
    return {"train_acc": [1.0] * len(STEPS), **{k: [v] * len(STEPS) for k, v in cols.items()}}


# --- claim 2: fig4_sampling ------------------------------------------------------------------------------

SAMPLING = {
    "seeds": 2,
    "grid": {"data.split": ["random", "uniform", "skewed"], "train.batch_size": [64, 512], "data.op": ["add", "mul"]},
}


def _sampling(tmp_path: Path, gen: dict[tuple[str, int], int | None], val: dict[tuple[str, int], float]) -> Group:
    """Per (split, batch): the step each member reaches 95% val (None: not by the budget) and its val."""

    def key(m: Member) -> tuple[str, int]:
        return str(m.values["data.split"]), int(m.values["train.batch_size"])

    def result(g: Group, m: Member) -> dict[str, Any]:
        g_step = gen[key(m)]
        stopped = val[key(m)] >= 0.99  # the stop rule: such a member ends before its budget
        return {"generalized_step": g_step, "steps": BUDGET - 100 if stopped else BUDGET}

    return _group(tmp_path, SAMPLING, lambda m: _const(val_acc=val[key(m)]), result)


def test_sampling_as_the_paper_has_it_is_reproduced(tmp_path: Path) -> None:
    # batch 64: uniform sooner than random, skewed ends below random (and above uniform, a wrong baseline);
    # batch 512: no lead, so the gap shrank; skewed below random there too, run to its budget
    gen = {
        ("random", 64): 300,
        ("uniform", 64): 200,
        ("skewed", 64): None,
        ("random", 512): 100,
        ("uniform", 512): 100,
        ("skewed", 512): None,
    }
    val = {
        ("random", 64): 0.96,
        ("uniform", 64): 0.3,
        ("skewed", 64): 0.6,
        ("random", 512): 0.98,
        ("uniform", 512): 0.98,
        ("skewed", 512): 0.7,
    }
    r = fig4_sampling(_sampling(tmp_path, gen, val))
    assert [(p.text, p.state) for p in r.parts] == [
        ("uniform sooner than random below batch 512", HOLDS),
        ("the gap shrinks at batch 512 and above", HOLDS),
        ("the skewed split fits the training set", HOLDS),
        ("the skewed split ends below random at batch 64", HOLDS),
        ("the skewed split ends below random at batch 512", HOLDS),
    ]
    assert "4 of 4 pairs" in r.parts[0].evidence and "4 of 4 pairs" in r.parts[1].evidence
    assert r.values["skew_minus_random_64"].startswith("−0.360 ")
    assert ceiling(r.parts) == "reproduced"


def test_sampling_reversed_reads_opposite_and_unread(tmp_path: Path) -> None:
    # batch 64: neither uniform nor random reaches 95% val (unread), the skewed split ends above random;
    # batch 512: the skewed member is below random only because both stopped at the target (no plateau)
    gen = {
        ("random", 64): None,
        ("uniform", 64): None,
        ("skewed", 64): None,
        ("random", 512): 100,
        ("uniform", 512): 200,
        ("skewed", 512): 100,
    }
    val = {
        ("random", 64): 0.02,
        ("uniform", 64): 0.02,
        ("skewed", 64): 0.5,
        ("random", 512): 0.998,
        ("uniform", 512): 0.995,
        ("skewed", 512): 0.992,
    }
    r = fig4_sampling(_sampling(tmp_path, gen, val))
    states = {p.text: p.state for p in r.parts}
    assert states["uniform sooner than random below batch 512"] == UNREAD
    assert states["the gap shrinks at batch 512 and above"] == UNREAD
    assert states["the skewed split ends below random at batch 64"] == OPPOSITE
    assert states["the skewed split ends below random at batch 512"] == FAILS  # stopped at the target: not below
    assert r.values["small_gen"] == "0 of 8" and r.values["uniform_sooner_large"] == "0 of 4 pairs"
    assert ceiling(r.parts) == "not reproduced"  # only the premise (fits) holds: a guard lifts nothing


def test_sampling_a_lead_bounded_by_the_budget_decides(tmp_path: Path) -> None:
    # batch 64: only uniform reaches (lead ≥ 400 − 100); batch 512: lead 0, so smaller: the gap shrank
    gen = {
        ("random", 64): None,
        ("uniform", 64): 100,
        ("skewed", 64): None,
        ("random", 512): 200,
        ("uniform", 512): 200,
        ("skewed", 512): None,
    }
    val = {k: 0.9 for k in gen}
    r = fig4_sampling(_sampling(tmp_path, gen, val))
    assert [p.state for p in r.parts[:2]] == [HOLDS, HOLDS]


# --- ours: fig4_token_skew -------------------------------------------------------------------------------

SKEW = {"data.split": "skewed", "data.skew_on": "both", "data.skew_order": "random"}
# s15 before s3: the reader takes the strongest skew by its value, not by its place
ARMS: dict[str, dict[str, Any]] = {
    "random": {"data.split": "random"},
    "s15": {**SKEW, "data.skew": 15.0},
    "s3": {**SKEW, "data.skew": 3.0},
}
TOKEN: dict[str, Any] = {"seeds": 2, "compare": "random", "grid": {"data.op": ["mul", "add"]}, "arms": ARMS}


def _token(tmp_path: Path, curves: dict[tuple[str, str], dict[str, list[float]]], **base: object) -> Group:
    """Per (arm, op): the member's curves; random reaches 95% val, the skewed arms do not."""

    def result(g: Group, m: Member) -> dict[str, Any]:
        return {"generalized_step": 100 if m.arm in ("random", "s3") else None}

    return _group(tmp_path, TOKEN, lambda m: curves[(m.arm, str(m.values["data.op"]))], result, **base)


def _flat_curve(val: float, rare: float, common: float) -> dict[str, list[float]]:
    return _const(val_acc=val, val_acc_rare=rare, val_acc_common=common)


def test_token_skew_reads_the_strongest_skew_paired_by_task(tmp_path: Path) -> None:
    curves = {
        ("random", "mul"): _flat_curve(0.99, 0.99, 0.99),
        ("random", "add"): _flat_curve(0.92, 0.92, 0.92),
        ("s15", "mul"): _flat_curve(0.95, 0.7, 0.99),  # below mul's random, above add's: pairs are by task
        ("s15", "add"): _flat_curve(0.9, 0.6, 0.97),
        ("s3", "mul"): _flat_curve(1.0, 1.0, 1.0),  # above random: reading s3 would fail
        ("s3", "add"): _flat_curve(1.0, 1.0, 1.0),
    }
    r = token_skew(_token(tmp_path, curves))
    assert [(p.text, p.state) for p in r.parts] == [
        ("the split fits the training set (s = 15)", HOLDS),
        ("it ends below the random split (s = 15)", HOLDS),
        ("a plateau: flat over the last quarter of the budget (s = 15)", HOLDS),
        ("the rare tokens' pairs below the common tokens' (s = 15)", HOLDS),
    ]
    assert r.parts[2].judged  # the plateau's threshold is ours: at most partly
    assert ceiling(r.parts, ours=True) == "partly"
    assert r.values["below_k"] == "4 of 4 pairs" and r.values["starved_gen"] == "0 of 4"
    assert r.values["s3_below"] == "0 of 4 pairs" and r.values["s3_sooner"].startswith("0 of 4")


def test_token_skew_above_random_a_rise_and_rare_above_common(tmp_path: Path) -> None:
    rising = _flat_curve(0.9, 0.95, 0.9)
    rising["val_acc"] = [0.1, 0.3, 0.5, 0.7, 0.7 + 2 * FLAT]  # rises by 2·FLAT over the last quarter
    curves = {
        ("random", "mul"): _flat_curve(0.5, 0.5, 0.5),
        ("random", "add"): _flat_curve(0.5, 0.5, 0.5),
        ("s15", "mul"): rising,
        ("s15", "add"): rising,
        ("s3", "mul"): _flat_curve(0.5, 0.5, 0.5),
        ("s3", "add"): _flat_curve(0.5, 0.5, 0.5),
    }
    r = token_skew(_token(tmp_path, curves))
    states = [p.state for p in r.parts]
    assert states == [HOLDS, OPPOSITE, FAILS, OPPOSITE]
    assert r.values["rise_max"] == f"{2 * FLAT:.3f}"


def test_token_skew_pairs_that_differ_in_more_than_the_split_fail(tmp_path: Path) -> None:
    table = {**TOKEN, "arms": {**ARMS, "s15": {**SKEW, "data.skew": 15.0, "optim.lr": 0.5}}}
    curves = {(a, op): _flat_curve(0.9, 0.8, 0.95) for a in ARMS for op in ("mul", "add")}
    g = _group(tmp_path, table, lambda m: curves[(m.arm, str(m.values["data.op"]))], lambda g, m: {})
    r = token_skew(g)
    assert r.parts[-1].text == "the pairs differ in the split alone" and r.parts[-1].state == FAILS
    assert r.values["below_k"] == "0 of 0 pairs"


# --- ours: fig4_epochs -----------------------------------------------------------------------------------

EPOCHS = {
    "seeds": 2,
    "grid": {"data.split": ["random", "skewed"], "data.skew": [15.0], "data.skew_on": ["both"]},
    "arms": {
        "b512": {"train.batch_size": 512, "train.max_steps": BUDGET},
        "b64": {"train.batch_size": 64, "train.max_steps": BUDGET},
    },
}


def _epochs(tmp_path: Path, gen: dict[tuple[str, str], int | None], val: dict[tuple[str, str], float]) -> Group:
    def key(m: Member) -> tuple[str, str]:
        return m.arm, str(m.values["data.split"])

    return _group(
        tmp_path,
        EPOCHS,
        lambda m: _const(val_acc=val[key(m)], val_acc_rare=val[key(m)] - 0.1),
        lambda g, m: {"generalized_step": gen[key(m)]},
    )


def test_epochs_below_random_at_every_batch_is_supported(tmp_path: Path) -> None:
    gen = {("b512", "random"): 100, ("b64", "random"): 300, ("b512", "skewed"): None, ("b64", "skewed"): None}
    val = {("b512", "random"): 0.98, ("b64", "random"): 0.97, ("b512", "skewed"): 0.9, ("b64", "skewed"): 0.88}
    r = fig4_epochs(_epochs(tmp_path, gen, val))
    assert [(p.text, p.state) for p in r.parts] == [
        ("the random split reaches 95% val at every batch", HOLDS),
        ("the starved split ends below random at batch 512", HOLDS),
        ("the starved split ends below random at batch 64", HOLDS),
    ]
    assert ceiling(r.parts, ours=True) == "supported"
    assert r.values["gap_64"].startswith("−0.090 ") and r.values["small_higher"] == "0 of 2 seeds"


def test_epochs_a_small_batch_that_catches_up_is_not_supported(tmp_path: Path) -> None:
    # at batch 64 the starved split ends above random, and random does not generalize there: both read
    gen = {("b512", "random"): 100, ("b64", "random"): None, ("b512", "skewed"): None, ("b64", "skewed"): None}
    val = {("b512", "random"): 0.98, ("b64", "random"): 0.5, ("b512", "skewed"): 0.9, ("b64", "skewed"): 0.6}
    r = fig4_epochs(_epochs(tmp_path, gen, val))
    assert [p.state for p in r.parts] == [FAILS, HOLDS, OPPOSITE]
    assert r.parts[0].evidence.startswith("batch 512: 2 of 2 by step 400; batch 64: 0 of 2")
    assert ceiling(r.parts, ours=True) == "partly"
