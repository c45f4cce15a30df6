"""Claim 4's "large c is unstable" (engine/claims/studies/claim4.py): a fitted member that loses the fit or spikes."""

from __future__ import annotations

from engine.claims.studies.claim4 import AFTER, BALANCE, LONG, after_fit
from engine.config.presets import load_preset


def _log(acc: list[float], loss: list[float] | None = None) -> list[dict[str, float]]:
    loss = loss or [1.0] * len(acc)
    pairs = enumerate(zip(acc, loss, strict=True))
    return [{"step": 100.0 * i, "train_acc": a, "train_loss": x} for i, (a, x) in pairs]


def test_a_fitted_member_that_loses_the_fit_is_unstable_and_one_that_keeps_it_is_not() -> None:
    assert after_fit(_log([0.5, 0.995, 0.999, 0.998, 0.999])) == (False, 3)
    assert after_fit(_log([0.5, 0.995, 0.999, 0.6, 0.999])) == (True, 3)  # below 0.9 after the fit


def test_a_loss_spike_after_the_fit_is_unstable() -> None:
    spike = _log([0.5, 0.995, 0.999, 0.999, 0.999], [3.0, 0.10, 0.05, 0.25, 0.04])  # 2.5 times its value at the fit
    assert after_fit(spike) == (True, 3)
    calm = _log([0.5, 0.995, 0.999, 0.999, 0.999], [3.0, 0.10, 0.05, 0.15, 0.04])
    assert after_fit(calm) == (False, 3)


def test_too_few_evaluations_after_the_fit_or_no_fit_cannot_tell() -> None:
    assert after_fit(_log([0.5, 0.7, 0.995, 0.999])) == (None, 1)  # a stop rule right after the fit
    assert after_fit(_log([0.1, 0.2, 0.3, 0.4, 0.5])) == (None, 0)
    assert AFTER == 3


def test_the_long_preset_has_no_stop_rule_references_and_large_c_and_fig5s_settings() -> None:
    long, short = load_preset(LONG), load_preset("fig5_c_sensitivity")
    assert long.config.train.patience == 0 and long.config.train.max_steps > 4 * short.config.train.max_steps
    cs = long.sweep["grid"]["optim.lr_ratio"]
    assert any(c <= BALANCE for c in cs) and any(c > BALANCE for c in cs)  # references and the large c
    assert set(cs) <= set(short.sweep["grid"]["optim.lr_ratio"])
    assert long.sweep["grid"]["data.op"] == short.sweep["grid"]["data.op"]
    assert long.config.optim == short.config.optim and long.config.train.batch_size == short.config.train.batch_size
