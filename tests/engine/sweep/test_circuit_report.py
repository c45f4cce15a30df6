"""The circuit report (engine/sweep/report/circuit.py) on hand-written tables whose every quantity is known."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine.config import ConfigError
from engine.records.group_dir import Member
from engine.sweep.report.circuit import circuit_cells, last_share, pooled, ring_at_end, run_dirs, run_measures
from tests.engine.sweep.fakegroup import fake_group

STEPS = list(range(0, 1100, 100))
# ‖θ‖²: the jump (600 -> 800) falls by 0.81, twice the log-rate of the window before it (400 -> 600: 0.9);
# after C (300) the fastest relative fall per step is 600 -> 700 (10/90), then it slows: U = 700
WEIGHT = [110, 108, 105, 102, 100, 95, 90, 80, 72.9, 70, 69]


def curve(p: int) -> dict[str, list[float]]:
    """M = 100, restricted loss under ln(p)/2 at 300 (key share above 0.5 throughout), test loss at 500, val acc 0.10
    at 600, 0.95 at 800."""
    hi, lo = math.log(p), math.log(p) / 4
    return {
        "train_acc": [0.5] + [1.0] * 10,
        "train_loss": [1.0] * 11,
        "val_acc": [0.0] * 6 + [0.2, 0.5, 0.96, 1.0, 1.0],
        "val_loss": [hi] * 5 + [lo] * 6,
        "restricted_loss": [hi] * 3 + [lo] * 8,
        "key_share": [0.9] * 11,  # the keys carry the logits' energy: C needs it (engine/train/phases.py)
        "weight_sq": WEIGHT,
        "val_acc_rare": [0.0] * 8 + [0.7, 0.9, 1.0],
    }


def rows(p: int) -> list[dict[str, float]]:
    cols = curve(p)
    return [{"step": float(s), **{k: float(v[i]) for k, v in cols.items()}} for i, s in enumerate(STEPS)]


def test_run_measures_of_a_hand_written_table() -> None:
    got = run_measures(rows(97), 97)
    assert (got["M"], got["C"], got["U"], got["G"], got["j0"]) == (100, 300, 700, 800, 600)
    assert (got["t_r"], got["t_t"], got["lead"]) == (300, 500, 200)
    assert got["dw"] == pytest.approx(72.9 / 90 - 1)
    assert got["rate_ratio"] == pytest.approx(2.0)
    assert got["val_rare_at_G"] == 0.7
    assert got["last_share"] is None and "mem_rare" not in got  # no progress files given


def test_no_jump_no_weight_measures() -> None:
    table = [r | {"val_acc": 0.0} for r in rows(97)]
    got = run_measures(table, 97)
    assert got["G"] is None and got["dw"] is None and got["rate_ratio"] is None and got["val_rare_at_G"] is None


def test_last_share_splits_a_tie_at_the_boundary() -> None:
    # joined at 100, 200, 300 ×3 (one of them rare), never (rare): the never-joined rare token is last,
    # the second last slot goes to one of the three tied at 300, rare in 1 of 3
    steps = ["100", "200", "300", "300", "300", ""]
    joins = [{"token": str(t), "rare": "1" if t >= 4 else "0", "join_step": s} for t, s in enumerate(steps)]
    assert last_share(joins) == pytest.approx((1 + 1 / 3) / 2)
    got = run_measures(rows(97), 97, joins=joins)
    assert (got["last_share"], got["never_rare"], got["never_common"]) == (last_share(joins), 1, 0)
    assert last_share([{"token": "0", "rare": "0", "join_step": "1"}]) is None


def test_ring_at_end_measures_rare_and_other_tokens() -> None:
    n = 5
    ring = [{"step": "0", "token": str(t), "x": "9", "y": "9", "membership": "0.1", "rare": "0"} for t in range(n)]
    for pos in range(n):  # the ring of frequency 1; token 2 (rare) at half the radius, 10° ahead
        ang, rad = 2 * math.pi * pos / n + (math.radians(10) if pos == 2 else 0), 0.5 if pos == 2 else 1.0
        ring.append(
            {"step": "100", "token": str(pos), "x": str(rad * math.cos(ang)), "y": str(rad * math.sin(ang))}
            | {"membership": "0.2" if pos == 2 else str(0.8 + 0.01 * pos), "rare": "1" if pos == 2 else "0"}
        )
    keyfreq = [  # the strongest key frequency with 2w < n is 1 (3 is past the Nyquist limit, 2 is not key)
        {"step": "100", "freq": f, "share": s, "key": k} for f, s, k in (("1", "0.5", "1"), ("2", "0.9", "0"))
    ] + [{"step": "100", "freq": "3", "share": "0.8", "key": "1"}, {"step": "0", "freq": "2", "share": "1", "key": "1"}]
    got = ring_at_end(ring, keyfreq)
    assert got["mem_rare"] == pytest.approx(0.2) and got["mem_common"] == pytest.approx(0.8 + 0.01 * 8 / 4)
    assert got["rad_rare"] == pytest.approx(0.5) and got["rad_common"] == pytest.approx(1.0)
    assert got["err_rare"] == pytest.approx(10.0) and got["err_common"] == pytest.approx(0.0, abs=1e-9)


def test_a_group_is_its_members_grouped_by_op_and_split(tmp_path: Path) -> None:
    def member_curve(m: Member) -> dict[str, list[float]]:
        cols = curve(11)
        if m.overrides.get("data.op") == "mul":  # the test loss falls 100 steps later on mul
            cols["val_loss"] = cols["val_loss"][:1] + cols["val_loss"][:-1]
        return cols

    table = {"seeds": 2, "grid": {"data.op": ["add", "mul"]}}
    g = fake_group(tmp_path / "g", table, member_curve, STEPS)
    cells = circuit_cells([g.dir])
    assert list(cells) == [("add", "random"), ("mul", "random")]
    assert [r["lead"] for r in cells[("add", "random")]] == [200, 200]
    assert [r["lead"] for r in cells[("mul", "random")]] == [300, 300]
    pool = pooled(cells)
    assert pool["lead"] == {"stat": (250.0, 200.0, 300.0, 4), "min": 200, "max": 300, "side": 4}  # 4 runs: the range
    assert pool["rate_ratio"]["side"] == 4 and pool["dw"]["side"] == 4 and pool["C-M"]["min"] == 200
    assert pool["G-U"]["side"] == 4 and pool["G-U"]["at_or_before"] == 4 and pool["G-U"]["max"] == 100
    assert len(run_dirs([g.dir, g.member_dir(g.members[0])])) == 5  # a group and one of its runs again


def test_not_a_run_or_group_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a run directory or a sweep group directory"):
        run_dirs([tmp_path])
