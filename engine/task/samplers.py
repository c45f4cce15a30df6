"""Batch samplers: shuffled epochs, and the frequency-aware samplers of §4.2 and App. A.

`balanced` targets uniform token probabilities p_i = 1/V (eq. 10); `gradient` targets
p_i* ∝ exp(L_i²/γ) (eq. 19) with L_i a running mean of token i's embedding-gradient norm per
occurrence, divided by its mean over tokens so that γ does not depend on the loss scale.
A token is drawn with probability p_i, then a training example containing it uniformly, so the
example weights are w_e = Σ_{t∈{a,b}} p_t / n_t with n_t the examples that contain t.
`replacement` draws examples uniformly with replacement, through the same multinomial draw: it is
the control arm that separates "with replacement" from the token weighting of the other two.
`balanced_epochs` draws the balanced weights without replacement: each epoch holds every example
round(w_e · n) times in expectation (stochastic rounding), shuffled, so tokens are balanced per epoch.

What "balanced" equalizes: the token a draw is made *for*. Token i is picked with probability 1/V and
then one of its n_i examples, but that example also holds a partner token, which gets the draw too. So
a token's share of all draws is 1/V plus what its partners pass on: rare tokens get about 1/V, their
frequent partners more. Every sampler counts its realized draws per token (`draws`, a pair (t, t)
once), and a run's summary.json logs each token's share of them (engine/train/evaluation.py).

`train.target_rate` r multiplies the weight of every example that holds a target token (data.starve_k)
under every sampler: shuffled epochs thin (r < 1) or repeat (r > 1) those examples by stochastic
rounding of r; the multinomial samplers multiply their example weights by r. r = 0 means matched
(`matched_rate`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import torch

from engine.config import RunConfig
from engine.task import data as D

GRAD_EMA = 0.9  # decay of the running per-token gradient norm L_i


class Sampler:
    """Draws index batches into the training set; all state lives in `state_dict` for resume."""

    def __init__(self, cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> None:
        self.n = len(x_train)
        self.batch = min(cfg.train.batch_size or self.n, self.n)
        self.steps_per_epoch = math.ceil(self.n / self.batch)
        self.device = device
        self.gen = torch.Generator().manual_seed(cfg.train.seed + 1)
        self.p = cfg.data.p
        ca, cb = D.operand_columns(cfg.data)  # by position in data.format, never from the end
        self.a = x_train[:, ca].cpu()
        self.b = x_train[:, cb].cpu()
        # b's draw goes to b only where b ≠ a: a pair (t, t) counts once for t (data.pairs_holding)
        self.b_other = torch.where(self.a != self.b, self.b, self.p)
        self.n_t = torch.as_tensor(
            D.pairs_holding(torch.stack([self.a, self.b], 1).numpy(), self.p), dtype=torch.float64
        )  # examples holding each operand token
        self.present = self.n_t > 0
        self.target = torch.as_tensor(np.isin(np.arange(self.p), D.starved_tokens(cfg.data, cfg.train.seed)))
        self.holds_target = self.target[self.a] | self.target[self.b]  # (n,) examples holding a target token
        self.rate_setting = cfg.train.target_rate
        self.rate = 1.0  # resolved by `_resolve_rate` once the base weights are known
        self.cfg = cfg  # train.target_draws_as resolves r against another training set of the same split
        self._a_dev, self._b_dev = self.a.to(device), self.b_other.to(device)
        self.draws = torch.zeros(self.p + 1, dtype=torch.int64, device=device)  # slot p collects nothing read
        self._ones = torch.ones(self.batch, dtype=torch.int64, device=device)

    def base_weights(self) -> torch.Tensor:
        """Each example's draw weight before train.target_rate: uniform unless a sampler weights tokens."""
        return torch.ones(self.n, dtype=torch.float64)

    def _resolve_rate(self) -> None:
        if self.cfg.train.target_draws_as and bool(self.holds_target.any()):
            self.rate = target_draws(self.cfg, self.a, self.b_other, self.target, self.batch, self.base_weights())
        elif self.rate_setting == 1 or not bool(self.holds_target.any()):
            self.rate = 1.0
        elif self.rate_setting > 0:
            self.rate = float(self.rate_setting)
        else:
            self.rate = matched_rate(self.base_weights(), self.a, self.b_other, self.target, self.p)

    def rate_weights(self) -> torch.Tensor:
        """r on the examples holding a target token, 1 elsewhere."""
        return torch.where(self.holds_target, self.rate, 1.0).double()

    def draw_weights(self) -> torch.Tensor:
        """Each example's draw weight: the sampler's own times train.target_rate's."""
        w = self.base_weights()
        return w * self.rate_weights() if self.rate != 1.0 else w

    def expected_share(self) -> torch.Tensor:
        """Each operand token's expected share of draws, (p,), summing to 1: from the current weights."""
        return token_share(self.draw_weights(), self.a, self.b_other, self.p)

    def next(self) -> torch.Tensor:
        idx = self._draw()
        # Counted with index_add_, not bincount: on a GPU bincount copies its input's min and max back to
        # the host (to check and size its output), two host syncs; the counts are integers, so the same.
        self.draws.index_add_(0, self._a_dev[idx], self._ones[: len(idx)])
        self.draws.index_add_(0, self._b_dev[idx], self._ones[: len(idx)])
        return idx

    def _draw(self) -> torch.Tensor:
        raise NotImplementedError

    def draw_share(self) -> list[float]:
        """The realized share of draws of each operand token so far, summing to 1 (NaN before a draw)."""
        d = self.draws[: self.p].double().cpu()
        total = float(d.sum())
        return (d / total).tolist() if total else [math.nan] * self.p

    @property
    def wants_grad(self) -> bool:
        return False

    def observe(self, x: torch.Tensor, grad_e: torch.Tensor) -> None:
        """Receive the batch tokens and ∇E after a step (gradient sampler only)."""

    def state_dict(self) -> dict[str, Any]:
        return {"gen": self.gen.get_state(), "draws": self.draws.cpu()}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        self.gen.set_state(s["gen"])
        if "draws" in s:  # checkpoints before draws were counted start the count at the resume
            self.draws.copy_(s["draws"])


def to_device(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A CPU tensor (drawn with the sampler's CPU generator) on the run's device without a host sync.

    `.to("cuda")` from pageable memory waits for the copy, and so for every kernel queued before it;
    from pinned memory with non_blocking=True it is queued behind them instead. The source is never
    written again, and torch's pinned-memory cache keeps its block until the copy is done.
    """
    if device.type != "cuda":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


def draw_counts(w: torch.Tensor, a: torch.Tensor, b_other: torch.Tensor, p: int) -> torch.Tensor:
    """Each operand token's weighted draw count, (p,), example e drawn with weight w_e: a draw of (a, b)
    counts for a and for b ≠ a."""
    return (torch.bincount(a, weights=w, minlength=p + 1) + torch.bincount(b_other, weights=w, minlength=p + 1))[:p]


def token_share(w: torch.Tensor, a: torch.Tensor, b_other: torch.Tensor, p: int) -> torch.Tensor:
    """Each operand token's share of draws, (p,), summing to 1 (`draw_counts` normalized)."""
    c = draw_counts(w, a, b_other, p)
    return c / c.sum()


def matched_rate(
    w: torch.Tensor, a: torch.Tensor, b_other: torch.Tensor, target: torch.Tensor, p: int, iters: int = 100
) -> float:
    """The r at which the target tokens' mean expected share of draws equals the median share of the other
    present tokens, with base example weights w.

    A target token's weighted draw count is r·A_t (every example holding it holds a target); another token's
    is B_t + r·X_t, X_t from its examples with a target partner. r = median(B + r·X) / mean(A) is a
    contraction while the median token has few target partners; it converges in a few iterations.
    """
    holds = target[a] | target[torch.where(b_other < p, b_other, a)]
    wt, wn = torch.where(holds, w, 0.0), torch.where(holds, 0.0, w)
    A, B = draw_counts(wt, a, b_other, p), draw_counts(wn, a, b_other, p)
    X = A  # draws of examples that hold a target: a target's A_t, another token's X_t
    present = (A + B) > 0
    tgt, other = target & present, ~target & present
    if not bool(tgt.any()) or not bool(other.any()):
        return 1.0
    a_mean = float(A[tgt].mean())
    r = 1.0
    for _ in range(iters):
        new = float((B[other] + r * X[other]).median()) / a_mean
        if abs(new - r) <= 1e-12 * max(r, 1.0):
            return new
        r = new
    return r


def target_occurrences(
    w: torch.Tensor, a: torch.Tensor, b_other: torch.Tensor, target: torch.Tensor, p: int, r: float, batch: int
) -> float:
    """A target token's expected draws per batch of `batch` examples, averaged over the targets, when the
    examples holding a target weigh r·w and the others w: batch · mean_t(r·A_t) / (W_other + r·W_target)."""
    holds = target[a] | target[torch.where(b_other < p, b_other, a)]
    A = draw_counts(torch.where(holds, w, 0.0), a, b_other, p)[target]
    w_t, w_o = float(w[holds].sum()), float(w[~holds].sum())
    return batch * r * float(A.mean()) / (w_o + r * w_t)


def target_draws(
    cfg: RunConfig, a: torch.Tensor, b_other: torch.Tensor, target: torch.Tensor, batch: int, w: torch.Tensor
) -> float:
    """r on this training set (a, b_other) such that a target's expected draws per batch equal what
    train.target_rate gives on the split's own training pairs (`own`) or on them with every target pair
    outside the test set added (`all`, train.add_pairs = targets): the draws factor of a fork study
    separated from its pairs factor."""
    from engine.config import ConfigError

    if not bool((w == w[0]).all()):
        raise ConfigError("train.target_draws_as: needs a sampler with uniform example weights (shuffle, replacement)")
    ref = dataclasses.replace(cfg.train, add_pairs="targets" if cfg.train.target_draws_as == "all" else "")
    ref_cfg = dataclasses.replace(cfg, train=dataclasses.replace(ref, target_draws_as=""))
    split = D.make_split(cfg.data, cfg.train.seed).train
    if ref_cfg.train.add_pairs:
        from engine.task.add_pairs import added_pairs

        split = np.sort(np.concatenate([split, added_pairs(ref_cfg)]))
    pairs = torch.as_tensor(D.operand_pairs(cfg.data)[split])
    ra, rb = pairs[:, 0], torch.where(pairs[:, 0] != pairs[:, 1], pairs[:, 1], cfg.data.p)
    ones = torch.ones(len(ra), dtype=torch.float64)
    r_ref = cfg.train.target_rate or matched_rate(ones, ra, rb, target, cfg.data.p)
    want = target_occurrences(ones, ra, rb, target, cfg.data.p, r_ref, batch)
    holds = target[a] | target[torch.where(b_other < cfg.data.p, b_other, a)]
    A = float(draw_counts(torch.where(holds, w, 0.0), a, b_other, cfg.data.p)[target].mean())
    w_t, w_o = float(w[holds].sum()), float(w[~holds].sum())
    if batch * A <= want * w_t:
        raise ConfigError(
            f"train.target_draws_as = {cfg.train.target_draws_as}: {want:.3g} draws of a target per batch are "
            f"out of reach on this training set (at most {batch * A / w_t:.3g})"
        )
    return want * w_o / (batch * A - want * w_t)


class ShuffleSampler(Sampler):
    """Shuffled epochs with a final partial batch, as DataLoader(shuffle=True) does.

    With train.target_rate r ≠ 1 an epoch holds each target example ⌊r⌋ or ⌈r⌉ times (stochastic
    rounding, expectation r), so a target pair is drawn r times as often per step as another pair.
    """

    def __init__(self, cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> None:
        super().__init__(cfg, x_train, device)
        self.perm: torch.Tensor | None = None
        self.pos = 0
        self._resolve_rate()
        self.weighted = self.rate != 1.0 or type(self) is not ShuffleSampler
        if self.weighted:
            self.steps_per_epoch = max(1, math.ceil(float(self.draw_weights().sum()) / self.batch))

    def epoch_items(self, weights: torch.Tensor) -> torch.Tensor:
        """The examples of one epoch: example e round(w_e)-times by stochastic rounding, shuffled."""
        if bool((weights == 1).all()):
            return torch.randperm(self.n, generator=self.gen)
        whole = weights.floor()
        reps = (whole + (torch.rand(self.n, generator=self.gen, dtype=torch.float64) < weights - whole)).long()
        items = torch.repeat_interleave(torch.arange(self.n), reps)
        if len(items) == 0:  # every weight rounded to 0: draw one example by weight
            items = torch.multinomial(weights, 1, generator=self.gen)
        return items[torch.randperm(len(items), generator=self.gen)]

    def _draw(self) -> torch.Tensor:
        if self.batch == self.n and not self.weighted:  # full batch: no order to draw
            if self.perm is None:
                self.perm = torch.arange(self.n, device=self.device)
            return self.perm
        if self.perm is None or self.pos >= len(self.perm):
            self.perm = to_device(self.epoch_items(self.draw_weights()), self.device)
            self.pos = 0
        idx = self.perm[self.pos : self.pos + self.batch]
        self.pos += self.batch
        return idx

    def state_dict(self) -> dict[str, Any]:
        perm = None if self.perm is None else self.perm.cpu()
        return {**super().state_dict(), "perm": perm, "pos": self.pos}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        super().load_state_dict(s)
        self.perm = None if s["perm"] is None else s["perm"].to(self.device)
        self.pos = s["pos"]


class TokenWeightedSampler(Sampler):
    """Draws examples so that operand tokens appear with target probabilities p_i (App. A)."""

    def __init__(self, cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> None:
        super().__init__(cfg, x_train, device)
        self.gamma = cfg.train.gamma
        self.L = torch.ones(self.p, dtype=torch.float64)  # running gradient norms (eq. 11)
        self._last: torch.Tensor | None = None  # the last batch's example indices, on the host
        self._resolve_rate()  # matched r from the weights at the start (the gradient sampler's then move)

    def token_probs(self) -> torch.Tensor:
        """Target token probabilities over operands; absent tokens get 0."""
        return torch.where(self.present, 1.0, 0.0) / self.present.sum()

    def base_weights(self) -> torch.Tensor:
        pt = self.token_probs() / self.n_t.clamp(min=1)
        return pt[self.a] + torch.where(self.a != self.b, pt[self.b], 0.0)

    def example_weights(self) -> torch.Tensor:
        """The draw weight of each example: the sampler's own, times train.target_rate on target examples."""
        return self.draw_weights()

    def _draw(self) -> torch.Tensor:
        idx = torch.multinomial(self.example_weights(), self.batch, replacement=True, generator=self.gen)
        self._last = idx  # the batch's examples on the host, for `observe`
        return to_device(idx, self.device)

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "L": self.L.clone()}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        super().load_state_dict(s)
        self.L = s["L"].clone()


class ReplacementSampler(TokenWeightedSampler):
    """Uniform example weights, drawn with replacement as balanced/gradient draw: their control arm."""

    base_weights = Sampler.base_weights


class BalancedEpochSampler(ShuffleSampler):
    """The balanced weights (eq. 10) without replacement: epochs of n draws balanced by token.

    Each epoch holds example e round(n·w_e/Σw) times (stochastic rounding), shuffled; so within every
    epoch each token is drawn for about n/V times, where `balanced` only reaches that in expectation.
    """

    def __init__(self, cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> None:
        self._balanced = TokenWeightedSampler(cfg, x_train, torch.device("cpu"))
        super().__init__(cfg, x_train, device)

    def base_weights(self) -> torch.Tensor:
        return self._balanced.base_weights()

    def draw_weights(self) -> torch.Tensor:
        w = self.base_weights() * self.rate_weights()
        return w * (self.n / float(w.sum()))  # an epoch of n draws on average


class GradientSampler(TokenWeightedSampler):
    """p_i* = softmax(L_i²/γ) over operand tokens (eq. 19).

    L_i is the norm of ∇E's row i divided by token i's occurrences in the batch. The raw row norm
    grows with how often the batch holds the token, which this sampler itself sets: a token it
    favours gets a larger norm and is favoured more, a rich-get-richer loop that made γ = 1
    collapse onto a few tokens (sampler_compare). Per occurrence, L_i measures the token's own
    gradient, as eq. 19 intends.
    """

    def __init__(self, cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> None:
        super().__init__(cfg, x_train, device)
        self.cols = D.operand_columns(cfg.data)

    @property
    def wants_grad(self) -> bool:
        return True

    def token_probs(self) -> torch.Tensor:
        L = self.L / self.L[self.present].mean()
        logits = torch.where(self.present, L.square() / self.gamma, -math.inf)
        return torch.softmax(logits, 0)

    def observe(self, x: torch.Tensor, grad_e: torch.Tensor) -> None:
        ca, cb = self.cols
        # The batch's operands from this sampler's own host-side draw: x[:, ca] is a[idx], x[:, cb] is b[idx],
        # and reading them there spares two device-to-host copies a step; the gradient norms still need one.
        last = self._last
        a, b = (self.a[last], self.b[last]) if last is not None else (x[:, ca].cpu(), x[:, cb].cpu())
        occ = torch.bincount(a, minlength=self.p)[: self.p] + torch.bincount(b, minlength=self.p)[: self.p]
        seen = occ > 0
        g = grad_e[: self.p].detach().norm(dim=1).double().cpu() / occ.clamp(min=1)
        self.L = torch.where(seen, GRAD_EMA * self.L + (1 - GRAD_EMA) * g, self.L)


class TailSampler(TokenWeightedSampler):
    """A frequency tail: pair (a, b) drawn with weight w(a)·w(b), w(t) = rank(t)^(-s), with replacement.

    Rare tokens in real data lie on a continuous tail of draw rates, not at one rate for a set of targets.
    With every pair of a token in the training set, token t's weighted draw count is w(t)·Σ_b w(b) (a pair
    (t, t) once), so its share of draws follows rank(t)^(-s). Ranks run 1..p in data.skew_order's order
    (engine/task/data.py `token_rank`; `random` is a permutation seeded by train.seed).
    """

    def base_weights(self) -> torch.Tensor:
        w = tail_weights(self.cfg)
        return w[self.a] * w[self.b]


def tail_weights(cfg: RunConfig) -> torch.Tensor:
    """w(t) = rank(t)^(-s) for the operand tokens t in 0..p-1, rank 1 the most drawn, (p,) float64."""
    rank = torch.as_tensor(D.token_rank(cfg.data, cfg.train.seed), dtype=torch.float64) + 1
    return rank.pow(-cfg.train.tail_s)


def tail_deciles(cfg: RunConfig) -> list[list[int]]:
    """The operand tokens in ten groups by tail rank, the most drawn first (ranks split as evenly as p allows)."""
    by_rank = np.argsort(D.token_rank(cfg.data, cfg.train.seed), kind="stable")
    return [part.tolist() for part in np.array_split(by_rank, 10)]


SAMPLER_CLASSES: dict[str, type[Sampler]] = {
    "shuffle": ShuffleSampler,
    "balanced": TokenWeightedSampler,
    "gradient": GradientSampler,
    "replacement": ReplacementSampler,
    "balanced_epochs": BalancedEpochSampler,
    "tail": TailSampler,
}


def build_sampler(cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> Sampler:
    return SAMPLER_CLASSES[cfg.train.sampler](cfg, x_train, device)
