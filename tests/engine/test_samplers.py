"""Frequency-aware samplers: balanced (eq. 10) and gradient (eq. 19) token targets."""

from __future__ import annotations

import numpy as np
import torch

from engine import data as D
from engine.samplers import (
    GRAD_EMA,
    GradientSampler,
    ReplacementSampler,
    ShuffleSampler,
    TokenWeightedSampler,
    build_sampler,
)
from tests.conftest import tiny_config


def _train(cfg):
    s = D.make_split(cfg.data, cfg.train.seed)
    seqs = D.tokens(cfg.data, D.operand_pairs(cfg.data))
    return torch.as_tensor(seqs[s.train])


def _token_draws(sampler, x, n=400) -> np.ndarray:
    counts = np.zeros(97)
    for _ in range(n):
        b = x[sampler.next()]
        counts += np.bincount(b[:, 0].numpy(), minlength=97) + np.bincount(b[:, 2].numpy(), minlength=97)
    return counts


def test_shuffle_visits_every_example_once_per_epoch() -> None:
    cfg = tiny_config(data__p=97, model__d_embed=8, train__batch_size=100)
    x = _train(cfg)
    s = ShuffleSampler(cfg, x, torch.device("cpu"))
    seen = torch.cat([s.next() for _ in range(s.steps_per_epoch)])
    assert sorted(seen.tolist()) == list(range(len(x)))


def test_balanced_sampler_levels_a_skewed_split() -> None:
    cfg = tiny_config(data__p=97, data__split="skewed", data__skew=3.0, train__batch_size=256)
    x = _train(cfg)
    shuffled = _token_draws(ShuffleSampler(cfg, x, torch.device("cpu")), x)
    balanced = _token_draws(TokenWeightedSampler(cfg, x, torch.device("cpu")), x)
    cv = lambda c: c.std() / c.mean()  # noqa: E731
    assert cv(balanced) < 0.2 < cv(shuffled)


def test_gradient_sampler_favours_large_gradient_tokens() -> None:
    cfg = tiny_config(data__p=97, train__batch_size=256, train__sampler="gradient", train__gamma=0.5)
    x = _train(cfg)
    s = GradientSampler(cfg, x, torch.device("cpu"))
    s.L = torch.ones(97, dtype=torch.float64)
    s.L[:10] = 3.0  # tokens 0..9 have 3x the gradient norm
    p = s.token_probs()
    assert p[:10].min() > 10 * p[10:].max()
    assert abs(float(p.sum()) - 1) < 1e-9
    draws = _token_draws(s, x, 100)
    assert draws[:10].mean() > 5 * draws[10:].mean()


def test_gradient_sampler_tracks_gradient_norms() -> None:
    cfg = tiny_config(train__sampler="gradient")
    x = _train(cfg)
    s = GradientSampler(cfg, x, torch.device("cpu"))
    g = torch.zeros(13, 8)
    g[3] = 10.0
    s.observe(torch.tensor([[3, 11, 4, 12]]), g)
    assert s.L[3] > 1 > s.L[4] and s.L[5] == 1.0  # 5 was not in the batch: unchanged


def test_gradient_sampler_normalises_l_per_occurrence() -> None:
    """A token held 3 times by the batch has a ∇E row 3 times its per-occurrence gradient: L sees 1/3 of it."""
    cfg = tiny_config(train__sampler="gradient")
    x = _train(cfg)
    s = GradientSampler(cfg, x, torch.device("cpu"))
    g = torch.zeros(13, 8)
    g[3, 0] = 6.0  # token 3: in 3 operand slots below
    g[4, 0] = 2.0  # token 4: in 1
    batch = torch.tensor([[3, 11, 4, 12], [3, 11, 3, 12]])
    s.observe(batch, g)
    assert s.L[3].item() == GRAD_EMA * 1 + (1 - GRAD_EMA) * 2.0
    assert s.L[4].item() == GRAD_EMA * 1 + (1 - GRAD_EMA) * 2.0  # same per-occurrence norm, same L
    assert s.L[5].item() == 1.0


def test_replacement_sampler_is_uniform_with_replacement() -> None:
    cfg = tiny_config(
        data__p=97, data__split="skewed", data__skew=3.0, train__batch_size=256, train__sampler="replacement"
    )
    x = _train(cfg)
    s = build_sampler(cfg, x, torch.device("cpu"))
    assert isinstance(s, ReplacementSampler)
    w = s.example_weights()
    assert torch.equal(w, torch.ones(len(x), dtype=torch.float64))
    batches = [s.next() for _ in range(200)]
    assert any(len(set(b.tolist())) < len(b) for b in batches)  # repeats within a batch: with replacement
    seen = np.bincount(torch.cat(batches).numpy(), minlength=len(x))
    # uniform over examples: the token histogram follows the split's own, unlike the balanced sampler
    shuffled = _token_draws(ShuffleSampler(cfg, x, torch.device("cpu")), x, 200)
    drawn = _token_draws(build_sampler(cfg, x, torch.device("cpu")), x, 200)
    assert np.corrcoef(shuffled, drawn)[0, 1] > 0.95
    assert seen.max() < 5 * seen.mean()
