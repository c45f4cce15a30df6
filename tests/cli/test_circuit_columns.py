"""`grok circuit` fills the ‖θ‖² columns when the jump starts between two of the progress probe's
measurements (progress_mul: evaluations every 100 steps, ‖θ‖² every 200, the jump from step 4,100), and
refuses, in one line with exit 2, a run without the probe."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine.sweep.report.circuit import jump_span, run_measures
from tests.cli.conftest import DATA, grok

P = 97


def rows() -> list[dict[str, float]]:
    """A grokking run logged as progress_mul logs it: M at 400, val acc ≥ 0.10 first at 4,100 (an odd
    hundred: no ‖θ‖² there), G at 5,200; ‖θ‖² falls 1% per 200 steps before the jump, 5% during it."""
    out = []
    w = 1000.0
    for step in range(0, 6_500, 100):
        if step and step % 200 == 0:
            w *= 0.95 if 4_000 <= step <= 5_200 else 0.99
        val = 0.0 if step < 4_100 else min(1.0, 0.10 + (step - 4_100) / 1_100 * 0.85)
        out.append(
            {
                "step": float(step),
                "train_acc": min(1.0, step / 400),
                "val_acc": val,
                "train_loss": 0.1,
                "val_loss": 4.0 * (1 - val) + 0.01,
                "restricted_loss": 4.0 if step < 3_800 else 1.0,
                "weight_sq": w if step % 200 == 0 else math.nan,
            }
        )
    return out


def test_the_jump_is_read_at_the_logged_steps_around_it() -> None:
    assert jump_span([0, 200, 4_000, 4_200, 5_200], 4_100, 5_200) == (4_000, 5_200)
    assert jump_span([0, 200, 4_000, 4_200, 5_000], 4_100, 5_100) is None  # nothing logged at or after G
    assert jump_span([4_200, 5_200], 4_100, 5_200) is None  # nothing logged at or before the start
    m = run_measures(rows(), P)
    assert (m["j0"], m["G"]) == (4_100, 5_200)
    # ‖θ‖² at 4,000 and 5,200: six falls of 5% (steps 4,200 ... 5,200), one of them 4,000's own
    assert m["dw"] == pytest.approx(0.95**6 - 1, rel=1e-9)
    # per step, the jump's fall against the window as long before it (2,800 to 4,000: 1% per 200 steps,
    # but 4,000's own fall is 5%)
    fall_jump = -6 * math.log(0.95) / 1_200
    fall_pre = -(5 * math.log(0.99) + math.log(0.95)) / 1_200
    assert m["rate_ratio"] == pytest.approx(fall_jump / fall_pre, rel=1e-9)


def test_a_run_without_the_progress_probe_is_refused(tmp_path: Path) -> None:
    r = grok("run", "--config", str(DATA / "tiny.toml"), "--out", str(tmp_path), "--quiet")
    assert r.returncode == 0, r.stderr
    run_dir = next(tmp_path.iterdir())
    c = grok("circuit", str(run_dir))
    assert c.returncode == 2 and c.stdout == ""
    assert c.stderr.startswith("error: ") and len(c.stderr.strip().splitlines()) == 1
    assert "--set probe.progress_every=100" in c.stderr
