"""The target probe's ring place (engine/probes/targets.py) against rows built on an exact ring."""

from __future__ import annotations

import numpy as np
import pytest

from engine.events import EvalLogged
from engine.probes.targets import TARGET_COLUMNS, ring_place
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def _ring(n: int, d: int, w: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.normal(size=(d, 2)))[0]  # a round ring: A ⟂ B, |A| = |B| = 2
    A, B = 2 * Q[:, 0], 2 * Q[:, 1]
    theta = 2 * np.pi * w * np.arange(n) / n
    ring: np.ndarray = 3.0 + np.cos(theta)[:, None] * A + np.sin(theta)[:, None] * B  # (n, d), centre 3
    return ring


def test_targets_on_the_ring_at_half_radius() -> None:
    n, targets = 31, np.array([2, 9, 17])
    E = _ring(n, 16, w=5)
    E[targets] = 3.0 + 0.5 * (E[targets] - 3.0)  # right direction, half the norm (§4.2's picture)
    norm, radius, angle = ring_place(E, np.arange(n), targets, n)
    assert norm == pytest.approx(0.5, rel=1e-9) and radius == pytest.approx(0.5, rel=1e-9)
    assert angle == pytest.approx(0.0, abs=1e-9)
    E[targets] = 3.0 - (E[targets] - 3.0)  # opposite side: the angle is π off, the radius the same
    norm, radius, angle = ring_place(E, np.arange(n), targets, n)
    assert radius == pytest.approx(0.5, rel=1e-9) and angle == pytest.approx(np.pi, rel=1e-9)


def test_a_random_target_row_has_a_chance_angle() -> None:
    n, d = 41, 64
    targets = np.arange(0, n, 4)
    angles = []
    for seed in range(20):
        E = _ring(n, d, w=3, seed=seed)
        E[targets] = 3.0 + np.random.default_rng(100 + seed).normal(size=(len(targets), d))
        angles.append(ring_place(E, np.arange(n), targets, n)[2])
    assert np.mean(angles) == pytest.approx(np.pi / 2, abs=0.25)  # uniform angle error: mean π/2


def test_the_probe_logs_its_columns_on_a_starved_run() -> None:
    cfg = tiny_config(data__p=23, data__starve_k=4, data__starve_m=2, probe__targets_every=20, train__max_steps=40)
    rows = [e.row for e in Trainer(cfg) if isinstance(e, EvalLogged)]
    for c in TARGET_COLUMNS:
        assert np.isfinite(rows[-1][c]) or c == "val_acc_target_unseen"
    assert 0 <= rows[-1]["val_acc_target_seen"] <= 1
