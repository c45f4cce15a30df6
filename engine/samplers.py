"""Batch samplers: shuffled epochs, and the frequency-aware samplers of §4.2 and App. A.

`balanced` targets uniform token probabilities p_i = 1/V (eq. 10); `gradient` targets
p_i* ∝ exp(L_i²/γ) (eq. 19) with L_i a running mean of token i's embedding-gradient norm per
occurrence, divided by its mean over tokens so that γ does not depend on the loss scale.
A token is drawn with probability p_i, then a training example containing it uniformly, so the
example weights are w_e = Σ_{t∈{a,b}} p_t / n_t with n_t the examples that contain t.
`replacement` draws examples uniformly with replacement, through the same multinomial draw: it is
the control arm that separates "with replacement" from the token weighting of the other two.
"""

from __future__ import annotations

import math

import torch

from engine.config import RunConfig

GRAD_EMA = 0.9  # decay of the running per-token gradient norm L_i


class Sampler:
    """Draws index batches into the training set; all state lives in `state_dict` for resume."""

    def __init__(self, cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> None:
        self.n = len(x_train)
        self.batch = cfg.train.batch_size or self.n
        self.batch = min(self.batch, self.n)
        self.steps_per_epoch = math.ceil(self.n / self.batch)
        self.device = device
        self.gen = torch.Generator().manual_seed(cfg.train.seed + 1)

    def next(self) -> torch.Tensor:
        raise NotImplementedError

    @property
    def wants_grad(self) -> bool:
        return False

    def observe(self, x: torch.Tensor, grad_e: torch.Tensor) -> None:
        """Receive the batch tokens and ∇E after a step (gradient sampler only)."""

    def state_dict(self) -> dict:
        return {"gen": self.gen.get_state()}

    def load_state_dict(self, s: dict) -> None:
        self.gen.set_state(s["gen"])


class ShuffleSampler(Sampler):
    """Shuffled epochs with a final partial batch, as DataLoader(shuffle=True) does."""

    def __init__(self, cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> None:
        super().__init__(cfg, x_train, device)
        self.perm: torch.Tensor | None = None
        self.pos = 0

    def next(self) -> torch.Tensor:
        if self.batch == self.n:  # full batch: no order to draw
            if self.perm is None:
                self.perm = torch.arange(self.n, device=self.device)
            return self.perm
        if self.perm is None or self.pos >= self.n:
            self.perm = torch.randperm(self.n, generator=self.gen).to(self.device)
            self.pos = 0
        idx = self.perm[self.pos : self.pos + self.batch]
        self.pos += self.batch
        return idx

    def state_dict(self) -> dict:
        perm = None if self.perm is None else self.perm.cpu()
        return {**super().state_dict(), "perm": perm, "pos": self.pos}

    def load_state_dict(self, s: dict) -> None:
        super().load_state_dict(s)
        self.perm = None if s["perm"] is None else s["perm"].to(self.device)
        self.pos = s["pos"]


class TokenWeightedSampler(Sampler):
    """Draws examples so that operand tokens appear with target probabilities p_i (App. A)."""

    def __init__(self, cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> None:
        super().__init__(cfg, x_train, device)
        self.p = cfg.data.p
        self.gamma = cfg.train.gamma
        self.a = x_train[:, 0].cpu()
        self.b = x_train[:, -2].cpu()  # b sits just before '='
        counts = torch.bincount(self.a, minlength=self.p) + torch.bincount(self.b[self.b != self.a], minlength=self.p)
        self.n_t = counts.double()  # examples containing each operand token
        self.present = counts > 0
        self.L = torch.ones(self.p, dtype=torch.float64)  # running gradient norms (eq. 11)

    def token_probs(self) -> torch.Tensor:
        """Target token probabilities over operands; absent tokens get 0."""
        return torch.where(self.present, 1.0, 0.0) / self.present.sum()

    def example_weights(self) -> torch.Tensor:
        pt = self.token_probs() / self.n_t.clamp(min=1)
        return pt[self.a] + torch.where(self.a != self.b, pt[self.b], 0.0)

    def next(self) -> torch.Tensor:
        idx = torch.multinomial(self.example_weights(), self.batch, replacement=True, generator=self.gen)
        return idx.to(self.device)

    def state_dict(self) -> dict:
        return {**super().state_dict(), "L": self.L.clone()}

    def load_state_dict(self, s: dict) -> None:
        super().load_state_dict(s)
        self.L = s["L"].clone()


class ReplacementSampler(TokenWeightedSampler):
    """Uniform example weights, drawn with replacement as balanced/gradient draw: their control arm."""

    def example_weights(self) -> torch.Tensor:
        return torch.ones(self.n, dtype=torch.float64)


class GradientSampler(TokenWeightedSampler):
    """p_i* = softmax(L_i²/γ) over operand tokens (eq. 19).

    L_i is the norm of ∇E's row i divided by token i's occurrences in the batch. The raw row norm
    grows with how often the batch holds the token, which this sampler itself sets: a token it
    favours gets a larger norm and is favoured more, a rich-get-richer loop that made γ = 1
    collapse onto a few tokens (sampler_compare). Per occurrence, L_i measures the token's own
    gradient, as eq. 19 intends.
    """

    @property
    def wants_grad(self) -> bool:
        return True

    def token_probs(self) -> torch.Tensor:
        L = self.L / self.L[self.present].mean()
        logits = torch.where(self.present, L.square() / self.gamma, -math.inf)
        return torch.softmax(logits, 0)

    def observe(self, x: torch.Tensor, grad_e: torch.Tensor) -> None:
        occ = (
            torch.bincount(x[:, 0].cpu(), minlength=self.p)[: self.p]
            + torch.bincount(x[:, -2].cpu(), minlength=self.p)[: self.p]
        )  # occurrences of each operand token in the batch
        seen = occ > 0
        g = grad_e[: self.p].detach().norm(dim=1).double().cpu() / occ.clamp(min=1)
        self.L = torch.where(seen, GRAD_EMA * self.L + (1 - GRAD_EMA) * g, self.L)


def build_sampler(cfg: RunConfig, x_train: torch.Tensor, device: torch.device) -> Sampler:
    kind = cfg.train.sampler
    if kind == "balanced":
        return TokenWeightedSampler(cfg, x_train, device)
    if kind == "gradient":
        return GradientSampler(cfg, x_train, device)
    if kind == "replacement":
        return ReplacementSampler(cfg, x_train, device)
    return ShuffleSampler(cfg, x_train, device)
