"""Frequency-aware samplers: balanced (eq. 10) and gradient (eq. 19) token targets."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.config import RunConfig
from engine.task import data as D
from engine.task.samplers import (
    GRAD_EMA,
    BalancedEpochSampler,
    GradientSampler,
    ReplacementSampler,
    Sampler,
    ShuffleSampler,
    TokenWeightedSampler,
    build_sampler,
)
from tests.conftest import tiny_config


def _train(cfg: RunConfig) -> torch.Tensor:
    s = D.make_split(cfg.data, cfg.train.seed)
    seqs = D.tokens(cfg.data, D.operand_pairs(cfg.data))
    return torch.as_tensor(seqs[s.train])


def _token_draws(sampler: Sampler, x: torch.Tensor, n: int = 400) -> np.ndarray:
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

    def cv(c: np.ndarray) -> float:
        return float(c.std() / c.mean())

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


# --- operands by position, every sampler under every data.format (issue 22) ----------------------

ALL_SAMPLERS = ("shuffle", "balanced", "gradient", "replacement", "balanced_epochs", "tail")
FORMATS = ("a_op_b_eq", "a_b_eq", "a_b")


def _split_pairs(cfg: RunConfig) -> np.ndarray:
    pairs: np.ndarray = D.operand_pairs(cfg.data)[D.make_split(cfg.data, cfg.train.seed).train]
    return pairs


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ALL_SAMPLERS)
def test_every_sampler_reads_a_and_b_by_position_in_every_format(kind: str, fmt: str) -> None:
    """The sampler's operands are the split's (a, b) pairs, whatever the format puts after b."""
    cfg = tiny_config(data__p=11, data__format=fmt, train__sampler=kind, train__batch_size=8)
    x = _train(cfg)
    s = build_sampler(cfg, x, torch.device("cpu"))
    pairs = _split_pairs(cfg)
    assert s.a.tolist() == pairs[:, 0].tolist() and s.b.tolist() == pairs[:, 1].tolist()
    assert s.n_t.tolist() == D.pairs_holding(pairs, 11).tolist()
    drawn = torch.cat([s.next() for _ in range(30)])
    held = pairs[drawn.numpy()]
    expect = np.bincount(held[:, 0], minlength=11) + np.bincount(held[:, 1][held[:, 1] != held[:, 0]], minlength=11)
    assert s.draws[:11].tolist() == expect.tolist()  # a draw of (t, t) counts once for t
    share = s.draw_share()
    assert sum(share) == pytest.approx(1.0) and share == pytest.approx((expect / expect.sum()).tolist())


@pytest.mark.parametrize("fmt", FORMATS)
def test_balanced_weights_follow_b_in_every_format(fmt: str) -> None:
    """With b read from the right column, the balanced weights level b's tokens too: on an a-only skew b's
    counts are flat, so each token's expected share of draws is 1/p up to its partners."""
    cfg = tiny_config(data__p=97, data__format=fmt, data__split="skewed", data__skew=3.0, train__batch_size=256)
    x = _train(cfg)
    s = TokenWeightedSampler(cfg, x, torch.device("cpu"))
    ref = TokenWeightedSampler(
        tiny_config(data__p=97, data__split="skewed", data__skew=3.0),
        _train(tiny_config(data__p=97, data__split="skewed", data__skew=3.0)),
        torch.device("cpu"),
    )
    assert torch.allclose(s.example_weights(), ref.example_weights())


def test_gradient_sampler_counts_occurrences_by_position_in_a_b() -> None:
    cfg = tiny_config(data__format="a_b", train__sampler="gradient")
    s = GradientSampler(cfg, _train(cfg), torch.device("cpu"))
    g = torch.zeros(11, 8)
    g[3, 0], g[4, 0] = 6.0, 2.0
    s.observe(torch.tensor([[3, 4], [3, 3]]), g)  # token 3 three times, 4 once: same per-occurrence norm
    assert s.L[3].item() == s.L[4].item() == GRAD_EMA + (1 - GRAD_EMA) * 2.0


def test_balanced_epochs_visit_each_token_evenly_within_an_epoch() -> None:
    cfg = tiny_config(data__p=97, data__split="skewed", data__skew=3.0, train__batch_size=256)
    x = _train(cfg)
    s = BalancedEpochSampler(cfg, x, torch.device("cpu"))
    first = torch.cat([s.next() for _ in range(s.steps_per_epoch)])
    assert abs(len(first) - len(x)) < 0.1 * len(x)  # an epoch is about n draws
    w = s.draw_weights()
    reps = np.bincount(first.numpy(), minlength=len(x))
    assert np.all(np.abs(reps - w.numpy()) < 1)  # each example ⌊n·w⌋ or ⌈n·w⌉ times: no replacement noise
    # per token, an epoch's draws sit closer to their expectation than the same number of draws with replacement
    with_repl = TokenWeightedSampler(cfg, x, torch.device("cpu"))
    for _ in range(s.steps_per_epoch):
        with_repl.next()

    def err(sampler) -> float:
        d = sampler.draws[:97].double()
        return float((d - sampler.expected_share() * d.sum()).abs().mean())

    assert err(s) < 0.5 * err(with_repl)


# --- train.target_rate: the decoupling knob (issue 22) -------------------------------------------


def _target_cfg(kind: str, rate: float, m: int = 3, **kw):
    return tiny_config(
        data__p=97,
        data__starve_k=10,
        data__starve_m=m,
        train__sampler=kind,
        train__batch_size=256,
        train__target_rate=rate,
        **kw,
    )


@pytest.mark.parametrize("kind", ALL_SAMPLERS)
@pytest.mark.parametrize("rate", [0.1, 4.0])
def test_target_rate_scales_the_target_pairs_draws_under_every_sampler(kind: str, rate: float) -> None:
    base = build_sampler(_target_cfg(kind, 1.0), _train(_target_cfg(kind, 1.0)), torch.device("cpu"))
    cfg = _target_cfg(kind, rate)
    s = build_sampler(cfg, _train(cfg), torch.device("cpu"))
    assert s.rate == rate
    held = s.holds_target
    for sampler in (base, s):
        for _ in range(300):
            sampler.next()
    tgt = s.target.nonzero().flatten()
    got = s.draws[tgt].sum().item() / max(base.draws[tgt].sum().item(), 1)
    assert 0.6 * rate < got < 1.6 * rate  # the target tokens' draws move by about r
    assert int(held.sum()) == int(base.holds_target.sum())  # the data are the same


@pytest.mark.parametrize("kind", ALL_SAMPLERS)
@pytest.mark.parametrize("m", [1, 3, -1])
def test_matched_rate_gives_targets_the_median_tokens_expected_share(kind: str, m: int) -> None:
    cfg = _target_cfg(kind, 0.0, m)
    s = build_sampler(cfg, _train(cfg), torch.device("cpu"))
    share = s.expected_share()
    tgt = s.target & s.present
    other = ~s.target & s.present
    assert float(share[tgt].mean()) == pytest.approx(float(share[other].median()), rel=1e-6)
    if m == 1 and kind in ("shuffle", "replacement"):
        assert s.rate > 10  # one pair against the median's dozens (balanced already gives it 1/p)


def test_matched_rate_is_realized_by_the_shuffled_sampler() -> None:
    cfg = _target_cfg("shuffle", 0.0, 1)
    s = build_sampler(cfg, _train(cfg), torch.device("cpu"))
    for _ in range(400):
        s.next()
    share = np.array(s.draw_share())
    tgt, other = s.target.numpy(), ~s.target.numpy()
    assert share[tgt].mean() == pytest.approx(np.median(share[other]), rel=0.15)


def test_target_rate_needs_target_tokens_and_batches() -> None:
    with pytest.raises(ValueError, match=r"train\.target_rate"):
        tiny_config(train__target_rate=0.5)
    with pytest.raises(ValueError, match=r"train\.target_rate"):
        tiny_config(data__starve_k=2, train__target_rate=0.5, train__batch_size=0)
    with pytest.raises(ValueError, match=r"train\.target_rate"):
        tiny_config(data__starve_k=2, train__target_rate=-1.0)


def test_default_shuffle_order_is_unchanged_by_the_rate_machinery() -> None:
    """r = 1 draws the same permutations as before the knob existed: old runs resume bit-exact."""
    cfg = tiny_config(data__p=97, train__batch_size=100)
    x = _train(cfg)
    s = ShuffleSampler(cfg, x, torch.device("cpu"))
    gen = torch.Generator().manual_seed(cfg.train.seed + 1)
    assert torch.equal(s.next(), torch.randperm(len(x), generator=gen)[:100])
