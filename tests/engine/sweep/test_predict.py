"""The wall-time prediction on a card (engine/sweep/predict.py): its fit, its prices and `grok sweep --plan`."""

from __future__ import annotations

import dataclasses

import pytest

from engine.config import RunConfig, apply_overrides
from engine.sweep import predict as P


def _cfg(**sets: str) -> RunConfig:
    return apply_overrides(RunConfig(), {"train.device": "cuda", "train.max_steps": "1000", **sets})


def test_fit_gives_the_model_and_residuals_the_plan_prints() -> None:
    """The constants are the fit of the measured segments, not numbers copied beside it."""
    model, res = P.fit()
    assert model == P.H200
    assert [round(r, 3) for r in res] == list(P.H200_RESIDUALS)
    assert P.rms(res) < 0.2  # the fit is this good, no better: the plan says so


def test_a_batch_is_priced_by_members_steps_instruments_and_its_step() -> None:
    one = _cfg()
    assert P.measurements(one, 1000) == {"eval": 11}  # an evaluation at 0 and every 100 steps
    probed = _cfg(**{"probe.hessian_every": "500", "probe.rank_every": "100"})
    assert P.measurements(probed, 1000) == {"eval": 11, "hessian": 3, "rank": 11}
    m = P.H200
    assert m.batch_seconds([one, one]) > m.batch_seconds([one])  # members cost
    assert m.batch_seconds([_cfg(**{"train.max_steps": "2000"})]) > m.batch_seconds([one])  # steps cost
    assert m.batch_seconds([probed]) - m.batch_seconds([one]) == pytest.approx(3 * 0.135 + 11 * 0.04)
    # a step that cannot record is an eager one; one whose gradients the host reads pays h per member
    lazy = _cfg(**{"optim.lazy_rows": "true"})
    assert not P.records(lazy) and P.records(one)
    eager = dataclasses.replace(m, eager_s=0.01)
    assert eager.batch_seconds([lazy]) - eager.batch_seconds([one]) == pytest.approx(1000 * (0.01 - P.STEP_S))
    grad = _cfg(**{"train.sampler": "gradient"})
    assert m.batch_seconds([grad, grad]) - m.batch_seconds([one, one]) == pytest.approx(2 * 1000 * m.observed_s)


def test_a_sweep_is_its_longest_batch_or_the_cards_shared_work() -> None:
    m = P.CardModel(start_s=10.0, overlap=0.5, observed_s=0.0, switching=0.0)
    assert m.wall((100.0, 1.0), 16) == 110.0  # the longest batch alone
    assert m.wall((50.0,) * 8, 16) == 10.0 + 0.5 * 400  # the card's work, overlapped
    assert P.CardModel(0.0, 1.0, 0.0, switching=0.1).wall((1.0,) * 4, 2) == pytest.approx(4 * 1.1)  # k = 2


def test_a_card_plan_lists_batches_and_a_predicted_time() -> None:
    rows = P.predict(["fig7_hessian", "fig6_optimizers"], free_gib=80, workers=16)
    assert [r.preset for r in rows] == ["fig7_hessian", "fig6_optimizers"]
    assert rows[0].members == 6 and rows[0].batches == (6,)  # one stacked model
    assert sum(rows[1].batches) == 24 and all(r.seconds > P.H200.start_s for r in rows)
    text = P.render(rows, 80, 16)
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "residuals -33% to +12%" in text and text.splitlines()[-1].split()[:3] == [
        "total",
        "30",
        str(len(rows[0].batches) + len(rows[1].batches)),
    ]


def test_the_fit_plans_as_the_measured_runs_did() -> None:
    """The segments were run by a planner that put weighted-epoch members alone and stacked no members that
    differ in decay settings or target rate: 68 batches for the paper, as measured (139.3 GiB, 16 workers)."""
    from engine.claims.paper import PAPER_SWEEPS

    assert sum(len(P.preset_batches(n, P.H200_FREE_GIB, 16, measured=True)) for n, _ in PAPER_SWEEPS) == 68
    then = P.preset_batches("cure_decouple", P.H200_FREE_GIB, 16, measured=True)
    now = P.preset_batches("cure_decouple", P.H200_FREE_GIB, 16)
    assert sum(len(b) == 1 for b in then) == 40 and len(now) < len(then)  # its 40 weighted members stack now


def test_parents_are_adopted_not_priced() -> None:
    """With --parents, a fork study's members that the parents' group holds are not trained."""
    alone = P.preset_batches("decouple_direction", 139.3, 16)
    adopted = P.preset_batches("decouple_direction", 139.3, 16, "decouple_cause")
    assert sum(map(len, alone)) - sum(map(len, adopted)) == 40  # decouple_cause's 40 parents
    steps = {c.train.max_steps for b in adopted for c in b}
    assert steps == {1}  # one-step forks from 10,000, priced from their fork step
