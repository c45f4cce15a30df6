"""Interventions on a run's weights at a fork, and frozen parameter sets during training (docs/FORK.md).

Row interventions act on the rows of E of a token set (engine/config/param_sets.py), every other entry of
every parameter left bit-identical:
- `rescale:TOKENS=ring` sets each row's distance from the ring's centre to the ring's median radius, its
  direction from the centre kept: the ring is the other operand rows on the group axis, its centre the
  constant of the ring fitted to them, the radius their median distance from it. §4.2 predicts that a rarely
  updated row loses norm to weight decay while its direction joins the ring; this undoes the norm
  alone. `rescale:TOKENS=xK` multiplies the rows by K.
- `reset:TOKENS` puts back the rows' initial values (the run's seed, engine/train/loop.py's init);
  `zero:TOKENS` zeroes them; `copy:TOKENS=RUN_DIR[@STEP]` copies them from another run with the same
  split (the same data config and seed), at a kept step or its latest checkpoint.
Set interventions change what trains from the fork on: `freeze:SETS`, `unfreeze:SETS`, `only:SETS`
(train.frozen and train.trainable).

`Freezer` holds frozen entries fixed: after every optimizer step it writes their saved values back.
Masking the gradient alone would not do: AdamW's decoupled decay and Adam's moments move an entry
whose gradient is zero, so the update itself is undone, and the entries stay bit-identical.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from engine.config import ConfigError, RunConfig
from engine.config.param_sets import Intervention, split_sets
from engine.config.param_sets import parse_intervention as parse_intervention  # the parsing is torch-free (sweep specs)
from engine.events import TokenSets
from engine.models import build_model
from engine.probes.masks import set_masks
from engine.rundir import checkpoint_at, load_state, read_config


def set_changes(cfg: RunConfig, iv: Intervention) -> RunConfig:
    """The config after a set intervention: freeze adds to train.frozen, unfreeze takes out of it (and out
    of an `only` set's complement by clearing train.trainable where it names the set), only sets train.trainable."""
    t = cfg.train
    if iv.kind == "only":
        return dataclasses.replace(cfg, train=dataclasses.replace(t, trainable=iv.what))
    frozen = split_sets(t.frozen)
    named = split_sets(iv.what)
    if iv.kind == "freeze":
        frozen += [s for s in named if s not in frozen]
        return dataclasses.replace(cfg, train=dataclasses.replace(t, frozen=", ".join(frozen)))
    missing = [s for s in named if s not in frozen and s not in split_sets(t.trainable)]
    if missing and not t.trainable:
        shown = ", ".join(missing)
        raise ConfigError(f"--intervene unfreeze:{iv.what}: {shown} is not frozen (train.frozen = {t.frozen!r})")
    trainable = split_sets(t.trainable)
    if t.trainable:
        trainable += [s for s in named if s not in trainable]
    left = ", ".join(s for s in frozen if s not in named)
    return dataclasses.replace(cfg, train=dataclasses.replace(t, frozen=left, trainable=", ".join(trainable)))


def frozen_masks(model: nn.Module, cfg: RunConfig, sets: TokenSets) -> dict[str, torch.Tensor]:
    """name -> bool mask of the entries held fixed: train.frozen, and everything outside train.trainable."""
    t = cfg.train
    frozen = set_masks(model, cfg, sets, t.frozen, "train.frozen")
    if t.trainable.strip():
        train = set_masks(model, cfg, sets, t.trainable, "train.trainable")
        for n, p in model.named_parameters():
            outside = ~train[n] if n in train else torch.ones(p.shape, dtype=torch.bool)
            frozen[n] = frozen[n] | outside if n in frozen else outside
    return {n: m for n, m in frozen.items() if bool(m.any())}


class Freezer:
    """Holds a member's frozen entries at their values at `snapshot()`: `restore()` after every optimizer step."""

    def __init__(self, params: dict[str, torch.Tensor], masks: dict[str, torch.Tensor]) -> None:
        self.params = {n: params[n] for n in masks}
        self.masks = {n: m.to(params[n].device) for n, m in masks.items()}
        self.whole = {n: bool(m.all()) for n, m in masks.items()}
        self.saved: dict[str, torch.Tensor] = {}

    def snapshot(self) -> None:
        self.saved = {n: p.detach().clone() for n, p in self.params.items()}

    @torch.no_grad()
    def restore(self) -> None:
        for n, p in self.params.items():
            if self.whole[n]:
                p.copy_(self.saved[n])
            else:
                p.copy_(torch.where(self.masks[n], self.saved[n], p))


# --- row interventions on a checkpoint's weights --------------------------------------------


def ring_centre(E: torch.Tensor, ring: list[int], axis: list[int] | None) -> torch.Tensor:
    """The centre of the ring that rows `ring` of E form: the constant of the ring fitted to them on the
    group axis (engine/probes/targets.py `ring_fit`, the centre the targets probe measures norms from), or
    their mean where the task has no axis (poly)."""
    if axis is None:
        return E[torch.tensor(ring)].double().mean(0)
    from engine.probes.targets import ring_fit

    where = {t: i for i, t in enumerate(axis)}
    rows = [t for t in ring if t in where]
    pos = np.array([where[t] for t in rows], dtype=np.float64)
    _, coef, _ = ring_fit(E[torch.tensor(rows)].double().numpy(), pos, len(axis))
    return torch.as_tensor(coef[0])


def apply_rows(
    iv: Intervention,
    model: dict[str, torch.Tensor],
    e_name: str,
    tokens: list[int],
    p: int,
    source: Any = None,
    axis: list[int] | None = None,
) -> str:
    """Apply a row intervention to the state dict `model` in place (rows `tokens` of `model[e_name]`);
    `source` is the rows' values for reset and copy, `axis` the operand tokens in group-axis order (the
    ring's tokens; engine/task/dlog.py), None where the task has none. Returns the detail the log records."""
    E = model[e_name]
    rows = torch.tensor(tokens, dtype=torch.long)
    if not tokens:
        return "no token in the set"
    before = E[rows].norm(dim=1)
    if iv.kind == "rescale" and iv.arg == "ring":
        # §4.2: a rarely updated row shrinks towards the ring's centre under weight decay while its
        # direction from the centre may be right. Undo the norm alone: each row's distance from the
        # centre c of the ring the other operand rows form is set to their median distance, its
        # direction from c kept (the targets probe then reads target_norm = 1).
        ring = [t for t in (axis if axis is not None else range(p)) if t not in set(tokens)]
        if not ring:
            raise ConfigError(f"--intervene {iv}: every operand row is in the set, no ring is left")
        c = ring_centre(E, ring, axis)
        radius = float(np.median((E[torch.tensor(ring)].double() - c).norm(dim=1).numpy()))
        off = E[rows].double() - c
        dist = off.norm(dim=1, keepdim=True)
        E[rows] = (c + torch.where(dist > 0, off * (radius / dist), off)).to(E.dtype)
        detail = f"distance from the ring's centre to its median radius {radius:.6g}"
    elif iv.kind == "turn":
        detail = _turn(iv, E, rows, tokens, p, source, axis)
    elif iv.kind == "rescale":
        if iv.arg == "median_norm":
            # the same question asked from the origin: each row's norm set to the median norm of the other
            # operand rows, its direction kept (a row's norm is what weight decay shrinks, eq. 3)
            others = [t for t in range(p) if t not in set(tokens)]
            if not others:
                raise ConfigError(f"--intervene {iv}: every operand row is in the set, no other row is left")
            radius_t = E[torch.tensor(others)].norm(dim=1).median()  # torch's median: the lower middle value
            scale = torch.where(before > 0, radius_t / before, torch.zeros_like(before))
            detail = f"norm to the other rows' median norm {radius_t.item():.6g}"
        else:
            k = float(iv.arg[1:])
            scale = torch.full_like(before, k)
            detail = f"norm x{k:g}"
        E[rows] = E[rows] * scale[:, None]
    elif iv.kind == "zero":
        E[rows] = 0
        detail = "rows zeroed"
    else:
        E[rows] = source[rows].to(E.dtype)
        detail = "initial values" if iv.kind == "reset" else f"copied from {iv.arg}"
    after = E[rows].norm(dim=1)
    return f"{detail}; mean norm {before.mean().item():.6g} -> {after.mean().item():.6g}"


def _turn(
    iv: Intervention,
    E: torch.Tensor,
    rows: torch.Tensor,
    tokens: list[int],
    p: int,
    source: Any,
    axis: list[int] | None,
) -> str:
    """turn:TOKENS=random|other|memorized: each row's direction from the ring's centre replaced, its distance
    from the centre kept. Does the row's direction carry what its few pairs taught it (§4.2)? random: a
    direction drawn from the run's own stream; other: the direction of another operand token of the ring
    (the set's rows take the ring's tokens in turn, from a draw of the seed); memorized: the row's own
    direction at the run's kept checkpoint of its memorization step M (`source`, that checkpoint's E)."""
    ring = [t for t in (axis if axis is not None else range(p)) if t not in set(tokens)]
    if not ring:
        raise ConfigError(f"--intervene {iv}: every operand row is in the set, no ring is left")
    c = ring_centre(E, ring, axis)
    dist = (E[rows].double() - c).norm(dim=1, keepdim=True)
    gen = torch.Generator().manual_seed(0x7E5 + len(tokens))
    if iv.arg == "random":
        u = torch.randn(len(tokens), E.shape[1], generator=gen, dtype=torch.float64)
        how = "random directions"
    elif iv.arg == "other":
        pick = torch.randperm(len(ring), generator=gen)[: len(tokens)] if len(ring) >= len(tokens) else None
        others = [ring[int(i)] for i in pick] if pick is not None else [ring[i % len(ring)] for i in range(len(tokens))]
        u = E[torch.tensor(others)].double() - c
        how = "the directions of tokens " + " ".join(map(str, others))
    else:
        then = source.double()
        u = then[rows] - ring_centre(then, ring, axis)
        how = "their directions at memorization"
    u = u / u.norm(dim=1, keepdim=True).clamp_min(1e-30)
    E[rows] = (c + u * dist).to(E.dtype)
    return f"{how}, distance from the ring's centre kept"


def initial_embedding(cfg: RunConfig, e_name: str) -> torch.Tensor:
    """E as the run's seed initialised it (engine/train/loop.py: torch.manual_seed(seed), then build_model)."""
    state = torch.get_rng_state()
    try:
        torch.manual_seed(cfg.train.seed)
        e: torch.Tensor = build_model(cfg).state_dict()[e_name].detach().clone()
        return e
    finally:
        torch.set_rng_state(state)


def copied_embedding(cfg: RunConfig, arg: str, e_name: str) -> tuple[torch.Tensor, str]:
    """E from RUN_DIR[@STEP] of a run with the same split; ConfigError, one line, where it is not."""
    run, _, at = arg.rpartition("@") if "@" in arg else (arg, "", "")
    src = Path(run)
    other = read_config(src)
    if other.data != cfg.data or other.train.seed != cfg.train.seed:
        raise ConfigError(f"--intervene copy: {src} has another split (its data config or seed differs)")
    if not at.isdigit() and at:
        raise ConfigError(f"--intervene copy: {at!r} is not a step")
    path, step = checkpoint_at(src, int(at) if at else None)
    state = load_state(path)
    E = state["model"].get(e_name)
    if E is None or tuple(E.shape) != (cfg.data.vocab_size, cfg.model.d_embed):
        raise ConfigError(f"--intervene copy: {src} has no embedding of this shape")
    return E, f"{src}@{step}"


def frozen_sets(loop: Any) -> list[Freezer]:
    """One Freezer per member of a training loop (engine/train/loop.py) with frozen entries (train.frozen,
    train.trainable); [] when none has any."""
    from engine.task.metrics import split_tokens

    out = []
    for i, c in enumerate(loop.cfgs):
        if c.train.frozen.strip() or c.train.trainable.strip():
            masks = frozen_masks(loop.weights.template, c, split_tokens(c))
            if masks:
                out.append(Freezer(loop.weights.params(i), masks))
    return out
