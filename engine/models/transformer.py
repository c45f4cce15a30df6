"""A one-layer transformer with configurable LayerNorm placement (docs/references/inductive-bias-layernorm.md).

Sequence [a, op, b, =] -> token embedding E plus a learned position embedding -> one block of
multi-head self-attention and an MLP, each with a residual -> logits read at the `=` position.
The LN placements and their equations are in docs/TRANSFORMER.md; `Block.forward` follows them
line by line.

With one layer and the readout at `=`, only the `=` row of the residual stream after attention
reaches the logits, so queries, the MLP and the LNs after attention are computed for that row
alone; the logits are the same as a full-sequence pass (tests/engine/test_transformer.py).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from engine.config import RunConfig
from engine.models.mlp import ACTIVATIONS

# Where LN acts, per placement (docs/TRANSFORMER.md): on the inputs of W_Q, W_K (qk), of W_V (v),
# on the MLP input (mlp), or after each residual sum (post).
LN_QK = ("pre_attn", "pre", "qk")
LN_V = ("pre_attn", "pre", "v")
LN_MLP = ("pre_mlp", "pre")


def lecun_normal_(w: torch.Tensor) -> torch.Tensor:
    """N(0, 1/fan_in) truncated at 2σ, the kernel init of the LN paper's runs."""
    std = 1.0 / math.sqrt(w.shape[1])
    return nn.init.trunc_normal_(w, std=std, a=-2 * std, b=2 * std)


class Attention(nn.Module):
    """Multi-head self-attention with separate W_Q, W_K, W_V, W_O (no biases), queried at `=`."""

    def __init__(self, d: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads, self.d_head = n_heads, d // n_heads
        self.W_Q = nn.Linear(d, d, bias=False)
        self.W_K = nn.Linear(d, d, bias=False)
        self.W_V = nn.Linear(d, d, bias=False)
        self.W_O = nn.Linear(d, d, bias=False)

    def forward(self, q_in: torch.Tensor, k_in: torch.Tensor, v_in: torch.Tensor) -> torch.Tensor:
        """q_in (B, d) is the `=` row; k_in, v_in (B, L, d) are all rows. Returns (B, d)."""
        B, L, d = k_in.shape
        H, dh = self.n_heads, self.d_head
        q = self.W_Q(q_in).view(B, H, 1, dh)  # (B, d) -> (B, H, 1, dh)
        k = self.W_K(k_in).view(B, L, H, dh).transpose(1, 2)  # (B, L, d) -> (B, H, L, dh)
        v = self.W_V(v_in).view(B, L, H, dh).transpose(1, 2)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(dh)  # (B, H, 1, L)
        z = scores.softmax(-1) @ v  # (B, H, 1, dh)
        out: torch.Tensor = self.W_O(z.reshape(B, d))  # (B, H, 1, dh) -> (B, d)
        return out


class MLP(nn.Module):
    """The block's MLP: d -> d_mlp -> d with the configured activation."""

    def __init__(self, d: int, d_mlp: int, activation: str) -> None:
        super().__init__()
        self.fc_in = nn.Linear(d, d_mlp)
        self.fc_out = nn.Linear(d_mlp, d)
        self.act = ACTIVATIONS[activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.fc_out(self.act(self.fc_in(x)))
        return out


class Block(nn.Module):
    """Attention then MLP, each with a residual; LN modules exist only where the placement puts them."""

    def __init__(self, d: int, n_heads: int, d_mlp: int, activation: str, layernorm: str) -> None:
        super().__init__()
        self.layernorm = layernorm
        self.attn = Attention(d, n_heads)
        self.mlp = MLP(d, d_mlp, activation)
        uses_attn_ln = layernorm in LN_QK + LN_V + ("post",)
        uses_mlp_ln = layernorm in (*LN_MLP, "post")
        self.ln_attn = nn.LayerNorm(d) if uses_attn_ln else None
        self.ln_mlp = nn.LayerNorm(d) if uses_mlp_ln else None

    def forward(self, x0: torch.Tensor) -> torch.Tensor:
        """x0 (B, L, d) -> the `=` row of the residual stream after the block, (B, d)."""
        ln, ln_attn, ln_mlp = self.layernorm, self.ln_attn, self.ln_mlp  # an LN exists where `ln` uses it
        normed = ln_attn(x0) if ln_attn is not None and ln in LN_QK + LN_V else x0
        qk_in = normed if ln in LN_QK else x0  # qk: LN on the query/key inputs only
        v_in = normed if ln in LN_V else x0  # v: LN on the value input only
        r1: torch.Tensor = x0[:, -1] + self.attn(qk_in[:, -1], qk_in, v_in)  # x1 = x0 + Attn(·), `=` row
        if ln_attn is not None and ln == "post":
            r1 = ln_attn(r1)  # x1 = LN(x0 + Attn(x0))
        mlp_in = ln_mlp(r1) if ln_mlp is not None and ln in LN_MLP else r1
        r2: torch.Tensor = r1 + self.mlp(mlp_in)  # x2 = x1 + MLP(·)
        if ln_mlp is not None and ln == "post":
            r2 = ln_mlp(r2)  # x2 = LN(x1 + MLP(x1))
        return r2


class Transformer(nn.Module):
    """logits = α · W_U x2[=]; E = `embedding.weight`, W = W_Q, W_K, W_V (the first matrices reading E)."""

    E_PATTERNS = ("embedding.weight",)
    W_PATTERNS = ("block.attn.W_Q.weight", "block.attn.W_K.weight", "block.attn.W_V.weight")

    def __init__(self, cfg: RunConfig) -> None:
        super().__init__()
        m = cfg.model
        d, L = m.d_embed, cfg.data.seq_len
        self.readout_scale = m.readout_scale  # α: the lazy/rich control of the LN paper (§ optimization)
        self.embedding = nn.Embedding(cfg.data.vocab_size, d)  # E ∈ R^{V×d}
        self.pos_embedding = nn.Parameter(torch.empty(L, d))
        self.block = Block(d, m.n_heads, m.d_mlp, m.activation, m.layernorm)
        self.readout = nn.Linear(d, cfg.data.p, bias=False)  # W_U
        self._init(d, m.embed_init_scale)
        self.embedding.weight.requires_grad_(not m.freeze_embedding)

    @torch.no_grad()
    def _init(self, d: int, embed_scale: float) -> None:
        # The LN paper's init: E ~ N(0, 1/d), positions ~ N(0, 0.02²), LeCun-normal kernels, zero biases.
        nn.init.normal_(self.embedding.weight, std=embed_scale / math.sqrt(d))
        nn.init.normal_(self.pos_embedding, std=0.02)
        for mod in self.modules():
            if isinstance(mod, nn.Linear):
                lecun_normal_(mod.weight)
                if mod.bias is not None:
                    nn.init.zeros_(mod.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x0 = self.embedding(x) + self.pos_embedding  # (B, L) -> (B, L, d)
        logits: torch.Tensor = self.readout_scale * self.readout(self.block(x0))  # (B, d) -> (B, p)
        return logits
