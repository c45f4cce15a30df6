"""The probe presets (Figs. 7, 9, 10, 11) load, name their figure, and switch their probe on."""

from __future__ import annotations

import pytest

from engine.config import RunConfig, all_keys, apply_overrides
from engine.config.presets import load_preset, presets_dir
from engine.events import EvalLogged
from engine.probes import DEFAULT_CADENCES
from engine.train.trainer import Trainer
from tests.conftest import tiny_config

PROBE_PRESETS = {
    "hessian_adam_mul": ("Figs. 7 and 9", "hessian_every", 1.0),
    "hessian_adamlr_mul": ("Figs. 7 and 9", "hessian_every", 10.0),
    "rank_adam": ("Fig. 10", "rank_every", 1.0),
    "rank_adamlr": ("Fig. 10", "rank_every", 10.0),
    "rank_adam_wd5e-3": ("Fig. 10", "rank_every", 1.0),
    "fourier_add": ("Fig. 11", "fourier_every", 1.0),
    "fourier_mul": ("Fig. 11", "fourier_every", 1.0),
    "fourier_div": ("Fig. 11", "fourier_every", 1.0),
}


@pytest.mark.parametrize("name", sorted(PROBE_PRESETS))
def test_probe_preset(name: str) -> None:
    figure, key, ratio = PROBE_PRESETS[name]
    first = (presets_dir() / f"{name}.toml").read_text().splitlines()[0]
    assert first.startswith("#") and figure in first
    cfg = load_preset(name).config
    assert getattr(cfg.probe, key) > 0
    assert cfg.optim.lr_ratio == ratio
    assert cfg.data.op == (name.rsplit("_", 1)[-1] if name.startswith("fourier") else "mul")
    if name == "rank_adam_wd5e-3":
        assert cfg.optim.weight_decay == 0.005


def test_default_cadences_are_config_keys() -> None:
    assert set(DEFAULT_CADENCES) <= set(all_keys())
    cfg = apply_overrides(RunConfig(), DEFAULT_CADENCES)
    assert all(getattr(cfg.probe, k.split(".")[1]) > 0 for k in DEFAULT_CADENCES)


def test_transformer_w_is_a_list_of_matrices() -> None:
    """W_Q, W_K, W_V (d, d) each read E: stacked, they make W (3d, d) and EW = E Wᵀ (V, 3d)."""
    cfg = tiny_config(model__kind="transformer", model__n_heads=2, model__d_mlp=16, probe__rank_every=20)
    cfg = apply_overrides(cfg, {"probe.hessian_every": 20, "train.max_steps": 20})
    tr = Trainer(cfg)
    rows = [ev.row for ev in tr if isinstance(ev, EvalLogged)]
    d, V = cfg.model.d_embed, cfg.data.vocab_size
    assert 0 < rows[-1]["rank_W"] <= d and 0 < rows[-1]["rank_EW"] <= min(V, d)
    assert rows[-1]["hess_W"] == rows[-1]["hess_W"]  # measured, not NaN
