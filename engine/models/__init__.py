"""The models: `build_model(cfg)`, and the parameter names of the blocks the paper studies, E and W.

The MLPs (eq. 1, eq. 2, one-hot) are in models/mlp.py, the transformer in models/transformer.py, and the
first layer's gathered-table arithmetic in models/first_layer.py.
"""

from __future__ import annotations

import fnmatch

from torch import nn

from engine.config import RunConfig
from engine.models.mlp import MLPEmbed, MLPOneHot, MLPRaw


def build_model(cfg: RunConfig) -> nn.Module:
    """The network `model.kind` names, freshly initialised from torch's global generator."""
    if cfg.model.kind == "transformer":
        from engine.models.transformer import Transformer

        return Transformer(cfg)
    return {"mlp_embed": MLPEmbed, "mlp_raw": MLPRaw, "mlp_onehot": MLPOneHot}[cfg.model.kind](cfg)


# Default parameter names of the blocks the paper studies; the transformer defines its own.
DEFAULT_E = ("embedding.weight",)
DEFAULT_W = ("first_layer.weight",)


def _match(model: nn.Module, patterns: tuple[str, ...]) -> list[str]:
    names = [n for n, _ in model.named_parameters()]
    return [n for n in names if any(fnmatch.fnmatch(n, pat) for pat in patterns)]


def embedding_names(model: nn.Module) -> list[str]:
    """Parameter names of E (empty for the raw MLP)."""
    return _match(model, getattr(model, "E_PATTERNS", DEFAULT_E))


def w_names(model: nn.Module, cfg: RunConfig | None = None) -> list[str]:
    """Parameter names of W, the first matrices that read E; `model.w_params` overrides by pattern."""
    if cfg is not None and cfg.model.w_params:
        pats = tuple(s.strip() for s in cfg.model.w_params.split(",") if s.strip())
        return _match(model, pats)
    return _match(model, getattr(model, "W_PATTERNS", DEFAULT_W))
