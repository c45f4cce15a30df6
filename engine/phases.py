"""Grokking phases from the evaluation stream: memorization, generalization, delay, early stop."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

MEMORIZED_ACC = 0.99  # train accuracy that counts as memorized
GENERALIZED_ACC = 0.95  # validation accuracy that counts as generalized
GENERALIZED = f"{GENERALIZED_ACC:.0%}"  # "95%": the threshold as the faces and reports write it


def grokking_delay(memorized_step: int | None, generalized_step: int | None) -> int | None:
    """Steps from memorization to generalization (the grokking delay), or None until both happened."""
    if memorized_step is None or generalized_step is None:
        return None
    return generalized_step - memorized_step


def stop_rule(config: Mapping[str, Any]) -> tuple[float, int]:
    """(train.target_val_acc, train.patience) of a config.json document, TrainConfig's defaults where absent."""
    from engine.config import TrainConfig

    train = config.get("train")
    train = train if isinstance(train, dict) else {}
    default = TrainConfig()
    return float(train.get("target_val_acc", default.target_val_acc)), int(train.get("patience", default.patience))


class PhaseTracker:
    """Follows the evaluations of one run: when it memorized and generalized, whether to stop or diverged."""

    def __init__(self, target_val_acc: float, patience: int) -> None:
        self.target = target_val_acc
        self.patience = patience
        self.memorized_step: int | None = None
        self.generalized_step: int | None = None
        self.best_val_acc = 0.0
        self.final_train_acc = float("nan")
        self.final_val_acc = float("nan")
        self.streak = 0
        self.diverged = False
        self.diverged_step: int | None = None
        self.stop_step: int | None = None  # the evaluation at which the early-stop rule first held

    def observe(self, step: int, train_acc: float, val_acc: float, train_loss: float) -> None:
        if not math.isfinite(train_loss):
            self.diverged = True
            self.diverged_step = step
            return
        self.final_train_acc, self.final_val_acc = train_acc, val_acc
        self.best_val_acc = max(self.best_val_acc, val_acc)
        if self.memorized_step is None and train_acc >= MEMORIZED_ACC:
            self.memorized_step = step
        if self.generalized_step is None and val_acc >= GENERALIZED_ACC:
            self.generalized_step = step
        self.streak = self.streak + 1 if val_acc >= self.target else 0
        if self.stop_step is None and self.should_stop:
            self.stop_step = step

    @property
    def should_stop(self) -> bool:
        return self.patience > 0 and self.streak >= self.patience

    def markers(self) -> dict[str, int | None]:
        """memorized_step and generalized_step as seen so far: what EvalLogged carries to the faces."""
        return {"memorized_step": self.memorized_step, "generalized_step": self.generalized_step}

    def summary(self) -> dict[str, Any]:
        m, g = self.memorized_step, self.generalized_step
        return {
            "memorized_step": m,
            "generalized_step": g,
            "grokking_delay": grokking_delay(m, g),
            "final_train_acc": self.final_train_acc,
            "final_val_acc": self.final_val_acc,
            "best_val_acc": self.best_val_acc,
            "early_stop_step": self.stop_step,
        }

    def state_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    def load_state_dict(self, s: dict[str, Any]) -> None:
        vars(self).update(s)


def early_stop_note(stop_step: int | None, target: float, patience: int, max_steps: int) -> str | None:
    """`stopped early at step N: val_acc ≥ T for P evaluations (train.patience)`, or None.

    A run whose rule first held at its last step ran its full budget: that is not an early stop.
    """
    if stop_step is None or stop_step >= max_steps:
        return None
    return f"stopped early at step {stop_step}: val_acc ≥ {target:g} for {patience} evaluations (train.patience)"


def phases_so_far(config: Mapping[str, Any], rows: list[dict[str, float]]) -> dict[str, Any]:
    """The phase fields of a run whose summary lags (live, killed), from its rows, by its own stop rule."""
    return phases_from_rows(rows, *stop_rule(config))


def phases_from_rows(rows: list[dict[str, float]], target_val_acc: float, patience: int) -> dict[str, Any]:
    """The phase fields of a summary, from metrics rows: for a run whose summary lags (live, killed)."""
    ph = PhaseTracker(target_val_acc, patience)
    for r in rows:
        ph.observe(int(r["step"]), r["train_acc"], r["val_acc"], r["train_loss"])
    return ph.summary()
