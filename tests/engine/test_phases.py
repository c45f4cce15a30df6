"""The early-stop rule watches train.stop_metric, and no other column (engine/train/phases.py)."""

from __future__ import annotations

import math

import pytest

from engine.config import ConfigError
from engine.events import EvalLogged, RunFinished
from engine.train.phases import PhaseTracker
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def _row(train_acc: float, val_acc: float, **more: float) -> dict[str, float]:
    return {"train_acc": train_acc, "val_acc": val_acc, "train_loss": 0.1, **more}


def test_stop_rule_reads_only_the_named_column() -> None:
    ph = PhaseTracker(0.9, 2, "train_acc")
    for step in range(5):  # val_acc at 1 every time: the default column would stop at the second evaluation
        ph.observe(step, _row(0.5, 1.0))
    assert ph.stop_step is None and not ph.should_stop
    ph.observe(5, _row(0.95, 0.0))
    ph.observe(6, _row(0.95, 0.0))
    assert ph.stop_step == 6


def test_a_missing_or_nan_cell_breaks_the_streak() -> None:
    ph = PhaseTracker(0.5, 2, "key_share")
    ph.observe(0, _row(1, 1, key_share=0.9))
    ph.observe(1, _row(1, 1, key_share=math.nan))  # the probe did not run at this evaluation
    ph.observe(2, _row(1, 1, key_share=0.9))
    assert ph.stop_step is None
    ph.observe(3, _row(1, 1, key_share=0.8))
    assert ph.stop_step == 3


def _first_streak_end(rows: list[dict[str, float]], col: str, target: float, patience: int) -> int | None:
    streak = 0
    for r in rows:
        streak = streak + 1 if r[col] >= target else 0
        if streak >= patience:
            return int(r["step"])
    return None


def test_a_run_stops_where_its_stop_metric_held() -> None:
    """A tiny add run fits half its training set by step ~200 and never generalizes: stopping on train_acc
    ends it there; the same rule on val_acc runs the whole budget."""

    def run(metric: str) -> tuple[list[dict[str, float]], RunFinished]:
        cfg = tiny_config(
            data__op="add",
            train__max_steps=400,
            train__eval_every=20,
            train__target_val_acc=0.5,
            train__patience=2,
            train__stop_metric=metric,
        )
        events = list(Trainer(cfg))
        rows = [e.row for e in events if isinstance(e, EvalLogged)]
        return rows, next(e for e in events if isinstance(e, RunFinished))

    rows, fin = run("train_acc")
    expected = _first_streak_end(rows, "train_acc", 0.5, 2)
    assert expected is not None and expected < 400
    assert fin.summary.early_stop_step == expected == rows[-1]["step"]
    rows, fin = run("val_acc")
    assert _first_streak_end(rows, "val_acc", 0.5, 2) is None
    assert fin.summary.early_stop_step is None and rows[-1]["step"] == 400


def test_a_stop_metric_that_is_not_logged_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"train\.stop_metric"):
        Trainer(tiny_config(train__patience=2, train__stop_metric="restricted_loss"))  # progress probe off
    with pytest.raises(ConfigError, match=r"train\.stop_metric"):
        tiny_config(train__stop_metric="wall_s")
