"""The paper's MLPs: eq. 1 on raw numbers, eq. 2 with a trainable embedding E, and eq. 2 on one-hot tokens."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from engine.config import RunConfig
from engine.models.first_layer import gather_sum, gathered_first_layer, onehot_first_layer, tables, tables_pay

# model.activation -> the function (the MLPs and the transformer's MLP)
ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"relu": F.relu, "gelu": F.gelu}


class _MLP(nn.Module):
    """What the MLPs share: W (`first_layer`, the name the W probes look for) over `n_in` inputs, then
    n_hidden - 1 hidden layers and the readout, each after the activation σ."""

    def _layers(self, cfg: RunConfig, n_in: int) -> None:
        hidden, bias = cfg.d_hidden, cfg.model.bias  # 4d = 512 (§5)
        self.act = ACTIVATIONS[cfg.model.activation]
        self.first_layer = nn.Linear(n_in, hidden, bias=bias)
        self.hidden = nn.ModuleList(nn.Linear(hidden, hidden, bias=bias) for _ in range(cfg.model.n_hidden - 1))
        self.readout = nn.Linear(hidden, cfg.data.p, bias=bias)

    def _head(self, h: torch.Tensor) -> torch.Tensor:
        """The layers after W, from its pre-activation h (B, hidden)."""
        h = self.act(h)
        for layer in self.hidden:
            h = self.act(layer(h))
        logits: torch.Tensor = self.readout(h)  # (B, p)
        return logits


class MLPEmbed(_MLP):
    """h1 = σ(W ê + b1), h2 = W2 h1 + b2, ê = [e_a, e_op, e_b, e_=] (eq. 2)."""

    # The training step's first layer: "auto" picks by FLOP count; "tables" (every batch size, the engine
    # before issue 16) or "plain" pins one, to time one against the other.
    train_path = "auto"

    def __init__(self, cfg: RunConfig) -> None:
        super().__init__()
        d, L = cfg.model.d_embed, cfg.data.seq_len
        self.embedding = nn.Embedding(cfg.data.vocab_size, d)  # E ∈ R^{V×d}
        with torch.no_grad():
            self.embedding.weight.mul_(cfg.model.embed_init_scale)  # §4.3 init scale
        self.embedding.weight.requires_grad_(not cfg.model.freeze_embedding)
        self._layers(cfg, L * d)  # W ∈ R^{4d×4d}, the bilinear partner of E

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled():
            e = self.embedding(x).flatten(1)  # (B, L) -> (B, L, d) -> (B, L·d)
            h = self.first_layer(e)  # (B, hidden)
        else:  # evaluation: the same W ê from the tables T_l = E W_lᵀ (engine/models/first_layer.py)
            h = gather_sum(tables(self.embedding.weight, self.first_layer.weight), x, self.first_layer.bias)
        return self._head(h)

    def forward_train(self, x: torch.Tensor) -> torch.Tensor:
        """The training step's forward, equal to `forward` up to rounding: W ê through the gathered tables
        when the batch is larger than the vocabulary, the plain Linear otherwise (FLOP count, first_layer.py)."""
        E, W, b = self.embedding.weight, self.first_layer.weight, self.first_layer.bias
        path = self.train_path
        if path == "tables" or (path == "auto" and tables_pay(x.shape[0], E.shape[0], x.device.type)):
            h = gathered_first_layer(x, E, W, b)
        else:
            h = F.linear(F.embedding(x, E).flatten(1), W, b)  # (B, L) -> (B, L, d) -> (B, L·d) -> (B, hidden)
        return self._head(h)


class MLPOneHot(_MLP):
    """Eq. 2 with E = I fixed: h1 = σ(W [1_{x_0}; …; 1_{x_{L-1}}] + b1), W ∈ R^{H×L·V} (one free column per
    position and token, no E·W product: the coupling-free control of §4.3).

    W times the one-hot input is the sum of L of its columns, gathered (first_layer.py), so the first
    layer costs B·L·H adds, not a matmul.
    """

    def __init__(self, cfg: RunConfig) -> None:
        super().__init__()
        self.vocab_size = V = cfg.data.vocab_size
        self._layers(cfg, cfg.data.seq_len * V)  # the Linear a one-hot [a; b] input would meet

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._head(onehot_first_layer(x, self.first_layer.weight, self.first_layer.bias, self.vocab_size))


class MLPRaw(_MLP):
    """The embedding-free MLP of eq. 1: the token ids themselves, as floats, are the input."""

    def __init__(self, cfg: RunConfig) -> None:
        super().__init__()
        self._layers(cfg, cfg.data.seq_len)  # W_1 x + b_1, x ∈ R^4

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._head(self.first_layer(x.to(self.first_layer.weight.dtype)))  # (B, L) -> (B, hidden)
