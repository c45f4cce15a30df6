"""Study: the factorial on the plateau after the fit (ours, §4.2, eqs. 3-6): r = 0.03 forked at memorization."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.studies.decouple_fit import decouple_fit

CLAIM = Claim(
    "decouple_plateau",
    "",
    "The factorial on the plateau after the fit (ours, §4.2, eqs. 3-6): decay, draws or pairs at r = 0.03?",
    "decouple_plateau",
    "partly",
    "forked at memorization ({fit_k} parents fit); raise the targets: decay off {decay_k}, more draws "
    "{draws_k}, all pairs {pairs_k} after 500 steps, {pairs_long_k} after 5,000",
    read=decouple_fit,  # the same parts, fixed before the data: presets/decouple_plateau.toml says why r = 0.03
    ours=True,
    tail=1,
    metrics="val_acc_target,target_norm,train_acc",
    tables=("factorial contrasts",),
    row=197,
)
