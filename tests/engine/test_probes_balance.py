"""The row-balance probe (engine/probes/balance.py) against a hand computation over a window of steps, and a
fork's batch facts counted inside its own window (engine/train/evaluation.py batch_facts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from engine.probes.balance import BalanceProbe
from engine.task import data as D
from engine.task.metrics import split_tokens
from engine.train.fork import fork_run
from engine.train.loop import TrainLoop
from engine.train.run import Run
from tests.conftest import tiny_config

E = "embedding.weight"
STARVED = {"data__starve_k": 2, "data__starve_m": 1, "data__frac_train": 0.5, "train__threads": 1}
TOL = 1e-9  # float64 sums of the same float32 numbers, in another order


def _probe(loop: TrainLoop) -> BalanceProbe:
    (probe,) = [p for p in loop.probe_sets[0].probes if isinstance(p, BalanceProbe)]
    return probe


@pytest.mark.parametrize("over", [{}, {"optim__decay_sets": "E[targets]=0"}, {"optim__lazy_rows": True}])
def test_the_window_sums_equal_a_hand_computation(over: dict[str, Any]) -> None:
    cfg = tiny_config(probe__balance=True, optim__weight_decay=0.05, **STARVED, **over)
    loop = TrainLoop([cfg])
    probe = _probe(loop)
    probe.measure(0)  # the window starts here
    targets = split_tokens(cfg).target
    others = [t for t in range(cfg.data.p) if t not in targets]
    ca, cb = D.operand_columns(cfg.data)
    V = cfg.data.vocab_size
    grad_sum, decay_sum, occ = torch.zeros(V, dtype=torch.float64), torch.zeros(V, dtype=torch.float64), torch.zeros(V)
    start = loop.weights.params(0)[E].detach().double().norm(dim=1)
    for k in range(4):
        idx = loop._offset + torch.arange(12 * k, 12 * k + 12)[None]
        _, x = loop.gradients(idx)
        probe.on_step(x[0])
        e = loop.weights.params(0)[E].detach().double()
        g = loop.weights.grad(E, 0)
        assert g is not None
        n = e.norm(dim=1)
        a, b = x[0][:, ca], x[0][:, cb]
        drawn = torch.bincount(a, minlength=V) + torch.bincount(b[b != a], minlength=V)
        wd = torch.full((V,), 0.05, dtype=torch.float64)
        if over.get("optim__decay_sets"):
            wd[list(targets)] = 0.0
        if over.get("optim__lazy_rows"):
            wd[drawn == 0] = 0.0
        grad_sum -= (g.double() * e).sum(1) / n
        decay_sum -= wd * n
        occ += drawn
        loop.apply(x)
    got = probe.measure(4)
    change = loop.weights.params(0)[E].detach().double().norm(dim=1) - start
    for name, v in (
        ("grad_step", grad_sum),
        ("decay_step", decay_sum),
        ("occurrences", occ.double()),
        ("norm_change", change),
    ):
        assert got[f"target_{name}"] == pytest.approx(float(v[list(targets)].mean()), rel=TOL, abs=TOL), name
        assert got[f"other_{name}"] == pytest.approx(float(v[others].quantile(0.5)), rel=TOL, abs=TOL), name
    assert (got["target_decay_step"] == 0.0) == bool(over.get("optim__decay_sets"))


def test_the_columns_are_logged_at_every_evaluation_but_the_first(tmp_path: Path) -> None:
    run = Run(tiny_config(probe__balance=True, **STARVED), tmp_path)
    list(run.events())
    rows = (run.dir / "metrics.csv").read_text().splitlines()
    header = rows[0].split(",")
    col = header.index("target_occurrences")
    cells = [r.split(",")[col] for r in rows[1:]]
    assert cells[0] == "" and all(c != "" for c in cells[1:])


def test_a_fork_counts_the_draws_of_its_own_window(tmp_path: Path) -> None:
    """The fork's target_batch_share is its steps' share, counted by hand from the checkpoints' counts."""
    parent = Run(tiny_config(train__keep_every=20, **STARVED, train__target_rate=0.2), tmp_path)
    list(parent.events())
    fork = Run.from_checkpoint(fork_run(parent.dir, 20, {"train.target_rate": "5"}))
    list(fork.events())
    targets = torch.as_tensor(split_tokens(fork.cfg).target)
    at_fork = torch.load(parent.dir / "checkpoints" / "step-000000020.pt", weights_only=True)["updates"]
    end = torch.load(fork.dir / "checkpoint.pt", weights_only=True)["updates"]
    steps = fork.cfg.train.max_steps - 20
    want = float(((end[targets] - at_fork[targets]).double() / steps).mean())
    got = json.loads((fork.dir / "summary.json").read_text())["target_batch_share"]
    assert got == pytest.approx(want, abs=1e-6)
    whole = float((end[targets].double() / fork.cfg.train.max_steps).mean())
    assert got != pytest.approx(whole, abs=1e-6)  # not parent plus fork over all the steps
