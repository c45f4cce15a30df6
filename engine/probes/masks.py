"""Parameter sets on a model (engine/config/param_sets.py parses them): the entries each set names, and each
entry's weight decay. Below train, so that the balance probe reads the decay the optimizer applies
(engine/train/decay.py) from one definition, and train.frozen's masks (engine/train/interventions.py) are the same sets.
"""

from __future__ import annotations

import torch
from torch import nn

from engine.config import ConfigError, RunConfig
from engine.config.param_sets import ParamSet, parse_decay_sets, parse_param_sets, specificity
from engine.events import TokenSets
from engine.models import embedding_names, w_names
from engine.task.metrics import resolve_tokens


def _names(model: nn.Module, cfg: RunConfig, ps: ParamSet, where: str) -> list[str]:
    names = [n for n, _ in model.named_parameters()]
    e = embedding_names(model)
    if ps.name == "E":
        if not e:
            raise ConfigError(f"{where}: this model ({cfg.model.kind}) has no embedding E")
        return e
    if ps.name == "W":
        return w_names(model, cfg)
    if ps.name == "rest":
        return [n for n in names if n not in e]
    if ps.name == "all":
        return names
    if ps.name not in names:
        raise ConfigError(f"{where}: no parameter {ps.name!r} (E, W, rest, all or one of {', '.join(names)})")
    return [ps.name]


def set_masks(model: nn.Module, cfg: RunConfig, sets: TokenSets, spec: str, where: str) -> dict[str, torch.Tensor]:
    """name -> bool mask (True = in the set) of each parameter the sets in `spec` touch."""
    params = dict(model.named_parameters())
    out: dict[str, torch.Tensor] = {}
    for ps in parse_param_sets(spec, where):
        for n in _names(model, cfg, ps, where):
            mask = torch.zeros(params[n].shape, dtype=torch.bool)
            if ps.rows is None:
                mask[...] = True
            else:
                mask[resolve_tokens(ps.rows, sets, cfg.data.p, where)] = True
            out[n] = out[n] | mask if n in out else mask
    return out


def decay_masks(
    model: nn.Module, cfg: RunConfig, sets: TokenSets, where: str = "optim.decay_sets"
) -> dict[str, torch.Tensor]:
    """name -> the decay of each entry of that parameter (its shape): optim.weight_decay where no set names
    it, else the value of the most specific set that does (engine/config/param_sets.py `specificity`)."""
    out = {n: torch.full(p.shape, cfg.optim.weight_decay, dtype=torch.float64) for n, p in model.named_parameters()}
    ranked = sorted(parse_decay_sets(cfg.optim.decay_sets, where), key=lambda sw: specificity(sw[0]))
    for ps, wd in ranked:  # the narrower sets last: they win where sets overlap
        for n, mask in set_masks(model, cfg, sets, str(ps), where).items():
            out[n][mask] = wd
    return out
