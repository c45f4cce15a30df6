"""Grokking phases from the evaluation stream: memorization, generalization, delay, early stop."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.config import TrainConfig

MEMORIZED_ACC = 0.99  # train accuracy that counts as memorized
GENERALIZED_ACC = 0.95  # validation accuracy that counts as generalized
GENERALIZED = f"{GENERALIZED_ACC:.0%}"  # "95%": the threshold as the faces and reports write it


def grokking_delay(memorized_step: int | None, generalized_step: int | None) -> int | None:
    """Steps from memorization to generalization (the grokking delay), or None until both happened."""
    if memorized_step is None or generalized_step is None:
        return None
    return generalized_step - memorized_step


class PhaseTracker:
    """Follows the evaluations of one run: when it memorized and generalized, whether to stop or diverged."""

    def __init__(self, target_val_acc: float, patience: int, stop_metric: str = "val_acc") -> None:
        self.target = target_val_acc
        self.patience = patience
        self.stop_metric = stop_metric  # the logged column the stop rule watches (train.stop_metric)
        self.memorized_step: int | None = None
        self.generalized_step: int | None = None
        self.best_val_acc = 0.0
        self.final_train_acc = float("nan")
        self.final_val_acc = float("nan")
        self.streak = 0
        self.diverged = False
        self.diverged_step: int | None = None
        self.stop_step: int | None = None  # the evaluation at which the early-stop rule first held

    def observe(self, step: int, row: Mapping[str, float]) -> None:
        """One evaluation's metrics row: the phases read train_acc, val_acc and train_loss, the stop rule
        reads only train.stop_metric (a probe's empty cell, NaN, breaks the streak)."""
        train_acc, val_acc, train_loss = row["train_acc"], row["val_acc"], row["train_loss"]
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
        watched = row.get(self.stop_metric, math.nan)
        self.streak = self.streak + 1 if watched >= self.target else 0
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


def early_stop_note(stop_step: int | None, train: TrainConfig) -> str | None:
    """`stopped early at step N: <train.stop_metric> ≥ T for P evaluations (train.patience)`, or None.

    A run whose rule first held at its last step ran its full budget: that is not an early stop.
    """
    if stop_step is None or stop_step >= train.max_steps:
        return None
    return (
        f"stopped early at step {stop_step}: {train.stop_metric} ≥ {train.target_val_acc:g} "
        f"for {train.patience} evaluations (train.patience)"
    )


@dataclass(frozen=True)
class Phases:
    """A run's phases as the engine found them: memorization, generalization, circuit formation and cleanup
    (the progress probe), the early-stop step, and the accuracies the phase tracker followed."""

    memorized_step: int | None = None
    generalized_step: int | None = None
    circuit_step: int | None = None
    cleanup_step: int | None = None
    early_stop_step: int | None = None
    final_train_acc: float = math.nan
    final_val_acc: float = math.nan
    best_val_acc: float = math.nan

    @property
    def delay(self) -> int | None:
        """The grokking delay (`grokking_delay`)."""
        return grokking_delay(self.memorized_step, self.generalized_step)

    def merged(self, newer: Phases) -> Phases:
        """These phases with what `newer` knows (its steps and accuracies that are not unknown)."""
        known = {k: v for k, v in vars(newer).items() if v is not None and not (isinstance(v, float) and math.isnan(v))}
        return dataclasses.replace(self, **known)

    @classmethod
    def of(cls, fields: Mapping[str, Any]) -> Phases:
        """From summary.json's or an EvalLogged's phase fields; a missing, null or non-finite one is unknown."""

        def num(k: str) -> float | None:
            v = fields.get(k)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                return None
            return float(v)

        # a step field defaults to None, an accuracy to NaN: each unknown reads as its default
        out: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            v = num(f.name)
            out[f.name] = f.default if v is None else int(v) if f.default is None else v
        return cls(**out)


def phases_of_rows(train: TrainConfig, rows: list[dict[str, float]], n_classes: int = 0) -> Phases:
    """The phases of a run whose summary lags (live, killed) from its metrics rows, by the rules the run
    applies live: its own stop rule, and the circuit phases when the progress probe ran (n_classes = p)."""
    ph = PhaseTracker(train.target_val_acc, train.patience, train.stop_metric)
    circuit = CircuitPhases(n_classes) if n_classes else None
    for r in rows:
        ph.observe(int(r["step"]), r)
        if circuit is not None:
            circuit.observe(int(r["step"]), r, ph.memorized_step)
    return Phases.of({**ph.summary(), **(circuit.markers() if circuit is not None else {})})


# --- Circuit phases from the progress measures (Nanda et al. 2023, §5.2; docs/PROBES.md `progress`) ---
#
# memorization: from step 0 until circuit formation starts.
# circuit formation starts at the first progress measurement at or after M where the restricted loss is
#   below 1/CIRCUIT_FACTOR of the chance loss ln(C): the key frequencies alone already give the answers of
#   all pairs a mean log-probability of -ln(C)/2, √C times chance (about 10% against 1% at p = 97), AND the
#   key frequencies carry at least CIRCUIT_KEY_SHARE of the logits' non-constant energy. Without the second
#   condition a lookup table with no Fourier circuit (logits α·δ(c = answer)) passes: it puts about
#   2/(n - 1) of its energy on every frequency, above the key threshold, so the cap picks 8 "keys" whose
#   restricted loss falls below ln(C)/2 at α = 20 (tests/engine/test_probes_progress.py).
# cleanup: where the weight norm's slope turns. ‖θ‖² falls from initialisation on under weight decay; after
#   circuit formation its fall speeds up, then slows again. The cleanup step is the end of the interval
#   between two measurements where ‖θ‖² fell fastest (relative fall per step) after circuit formation,
#   confirmed once the fall has slowed below CLEANUP_SLOWER of that rate.
CIRCUIT_FACTOR = 2.0
CIRCUIT_KEY_SHARE = 0.5
CLEANUP_SLOWER = 0.9


class CircuitPhases:
    """Follows the progress columns of one run's rows: when circuit formation and cleanup start."""

    def __init__(self, n_classes: int) -> None:
        self.chance = math.log(n_classes)
        self.circuit_step: int | None = None
        self.cleanup_step: int | None = None
        self.last: tuple[int, float] | None = None  # (step, ‖θ‖²) at the previous measurement
        self.fastest: tuple[int, float] | None = None  # (end step, relative fall per step) since circuit formation

    def observe(self, step: int, row: dict[str, float], memorized_step: int | None) -> None:
        r, w = row.get("restricted_loss", math.nan), row.get("weight_sq", math.nan)
        if not (math.isfinite(r) and math.isfinite(w)):
            return  # the probe did not run at this evaluation
        last, self.last = self.last, (step, w)
        if self.circuit_step is None:
            share = row.get("key_share", math.nan)  # NaN (no such column: an old run) compares False
            if memorized_step is not None and r * CIRCUIT_FACTOR < self.chance and share >= CIRCUIT_KEY_SHARE:
                self.circuit_step = step
            return
        if self.cleanup_step is not None or last is None or step <= last[0] or last[1] <= 0:
            return
        rate = (last[1] - w) / last[1] / (step - last[0])
        if self.fastest is None or rate >= self.fastest[1]:
            self.fastest = (step, rate)
        elif rate < CLEANUP_SLOWER * self.fastest[1]:
            self.cleanup_step = self.fastest[0]

    def markers(self) -> dict[str, int | None]:
        return {"circuit_step": self.circuit_step, "cleanup_step": self.cleanup_step}

    def state_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    def load_state_dict(self, s: dict[str, Any]) -> None:
        vars(self).update(s)


def circuit_phases_from_rows(rows: list[dict[str, float]], n_classes: int) -> dict[str, int | None]:
    """memorized, generalized, circuit and cleanup steps of a run from its metrics rows (the same rules as live)."""
    ph = phases_of_rows(TrainConfig(), rows, n_classes)  # patience 0: no stop rule
    return {k: getattr(ph, k) for k in ("memorized_step", "generalized_step", "circuit_step", "cleanup_step")}
