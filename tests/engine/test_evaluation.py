"""The shared evaluation core: one pass over a set, for one model or a batch of members, and the phase markers."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.events import EvalLogged, RunFinished
from engine.train.evaluation import evaluate
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def test_evaluate_matches_a_direct_computation_in_chunks() -> None:
    gen = torch.Generator().manual_seed(0)
    W = torch.randn(3, 5, 7, generator=gen, dtype=torch.float64)  # 3 members, L = 5 inputs, 7 classes
    x = torch.randn(3, 23, 5, generator=gen, dtype=torch.float64)  # (N, n, L)
    y = torch.randint(0, 7, (3, 23), generator=gen)

    def forward(xb: torch.Tensor) -> torch.Tensor:  # (N, c, L) -> (N, c, 7)
        return torch.einsum("ncl,nlk->nck", xb, W)

    loss, acc, hits = evaluate(forward, F.cross_entropy, x, y, chunk=4)  # 23 = 5 chunks of 4 and one of 3
    for i in range(3):
        logits = x[i] @ W[i]
        torch.testing.assert_close(loss[i], F.cross_entropy(logits, y[i]), rtol=1e-12, atol=0)
        assert torch.equal(hits[i], logits.argmax(1) == y[i])
        assert float(acc[i]) == float((logits.argmax(1) == y[i]).double().mean())
    one = evaluate(lambda xb: xb @ W[1], F.cross_entropy, x[1], y[1], chunk=4)  # one model: no member axis
    torch.testing.assert_close(one[0], loss[1])
    assert torch.equal(one[2], hits[1])


def test_eval_events_carry_the_phase_markers_of_the_summary() -> None:
    cfg = tiny_config(train__max_steps=200, train__eval_every=10, optim__lr=1e-2, data__frac_train=0.6)
    markers, summary = [], {}
    for ev in Trainer(cfg):
        if isinstance(ev, EvalLogged):
            markers.append((ev.step, ev.memorized_step, ev.generalized_step))
        elif isinstance(ev, RunFinished):
            summary = ev.summary.doc()
    m = summary["memorized_step"]
    assert m is not None  # the tiny task is memorized within the budget
    for step, mem, _ in markers:
        assert mem == (m if step >= m else None)
    assert markers[-1][2] == summary["generalized_step"]
