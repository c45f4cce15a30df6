"""The decoupling's target tokens (data.starve_k; issue 33): accuracy by operand position, and where their
embedding rows sit against the ring the other tokens form (§4.2: a rarely updated row loses its norm to
weight decay while its direction may be right).

Columns, at every measurement:
- val_acc_target_seen / _unseen: the test pairs holding a target, split by whether each target sits at an
  operand position (a or b) at which the training set shows it (engine/task/data.py `position_seen`). The MLP
  reads [e_a, e_b] through separate blocks of W, so a token seen only as a has trained W's a-block alone.
- target_norm: median ‖E_t − c‖ over the targets over the median over the other axis tokens (1 = the
  ring's median radius), c the centre of the ring the other tokens form (below).
- target_radius, target_angle: each target's coordinates in the plane of the ring the OTHER tokens form
  (the frequency whose cos/sin fit explains most of their centred energy, fitted without the targets, so
  a target is not projected onto coefficients it helped compute): its radius over the others' median
  radius, and the median |angle − the angle its place on the axis puts it at| (radians; π/2 is chance).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch.func import functional_call

from engine.probes.base import Blocks, Probe, ProbeContext
from engine.task import data as D
from engine.task.dlog import group_axis

TARGET_COLUMNS = ("val_acc_target_seen", "val_acc_target_unseen", "target_norm", "target_radius", "target_angle")


def ring_fit(E: np.ndarray, positions: np.ndarray, n: int) -> tuple[int, np.ndarray, float]:
    """The frequency w (1 <= w < n/2) whose ring, centre + A cos θ + B sin θ (θ = 2πw·position/n), best
    fits these rows of E: (w, the (3, d) coefficients centre, A, B, the share of centred energy explained)."""
    total = float(((E - E.mean(0)) ** 2).sum())
    best: tuple[int, np.ndarray, float] = (1, np.zeros((3, E.shape[1])), -math.inf)
    for w in range(1, (n + 1) // 2):
        theta = 2 * np.pi * w * positions / n
        X = np.stack([np.ones_like(theta), np.cos(theta), np.sin(theta)], 1)  # (m, 3)
        coef = np.linalg.lstsq(X, E, rcond=None)[0]  # (3, d)
        explained = total - float(((E - X @ coef) ** 2).sum())
        if explained > best[2]:
            best = (w, coef, explained)
    return best[0], best[1], best[2] / total if total > 0 else math.nan


def ring_place(E: np.ndarray, axis_pos: np.ndarray, targets: np.ndarray, n: int) -> tuple[float, float, float]:
    """(target_norm, target_radius, target_angle) of rows `targets` of E (n, d) at axis positions `axis_pos`,
    against the ring fitted to the other rows (`ring_fit`, its centre the reference for the norms)."""
    others = np.setdiff1d(np.arange(n), targets)
    w, coef, _ = ring_fit(E[others], axis_pos[others], n)
    centred = E - coef[0]
    norms = np.linalg.norm(centred, axis=1)
    norm = float(np.median(norms[targets]) / np.median(norms[others]))
    xy = np.linalg.lstsq(coef[1:].T, centred.T, rcond=None)[0]  # (2, n): coordinates in the ring's plane
    radius = np.hypot(xy[0], xy[1])
    theta = 2 * np.pi * w * axis_pos / n
    err = np.abs((np.arctan2(xy[1], xy[0]) - theta + np.pi) % (2 * np.pi) - np.pi)
    return norm, float(np.median(radius[targets]) / np.median(radius[others])), float(np.median(err[targets]))


class TargetProbe(Probe):
    """TARGET_COLUMNS for a run with data.starve_k targets (probe.targets_every)."""

    name = "targets"

    def __init__(self, ctx: ProbeContext, blocks: Blocks) -> None:
        cfg = ctx.cfg
        super().__init__(cfg.probe.targets_every if cfg.data.starve_k else 0)
        self.columns = list(TARGET_COLUMNS)
        if not self.enabled:
            return
        self.ctx, self.blocks = ctx, blocks
        self.targets = D.starved_tokens(cfg.data, cfg.train.seed)
        test = D.operand_pairs(cfg.data)[D.make_split(cfg.data, cfg.train.seed).test]  # a fork never moves it
        a_col, b_col = D.operand_columns(cfg.data)
        x_train = ctx.x_train.cpu().numpy()  # the run's own training set: a fork's train.add_pairs included
        train = np.stack([x_train[:, a_col], x_train[:, b_col]], 1)
        seen, unseen = D.position_seen(train, test, self.targets, cfg.data.p)
        holds = seen | unseen
        device = next(iter(ctx.params.values())).device
        self.x = torch.as_tensor(D.tokens(cfg.data, test[holds]), device=device)
        self.y = torch.as_tensor(D.labels(cfg.data, test[holds]), device=device)
        self.seen = torch.as_tensor(seen[holds], device=device)
        self.buffers = dict(ctx.model.named_buffers())
        self.axis = group_axis(cfg.data) if cfg.data.op in ("add", "sub", "mul", "div") else None

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        params = {**self.ctx.params, **self.buffers}
        hit = functional_call(self.ctx.model, params, (self.x,)).argmax(-1) == self.y
        n_seen = int(self.seen.sum())
        n_unseen = len(self.seen) - n_seen
        out: dict[str, Any] = {
            "val_acc_target_seen": float(hit[self.seen].double().mean()) if n_seen else math.nan,
            "val_acc_target_unseen": float(hit[~self.seen].double().mean()) if n_unseen else math.nan,
        }
        if self.blocks.e_names and self.axis is not None:
            order = self.axis.order
            E = self.blocks.embedding.double().cpu().numpy()[order]  # operand rows in axis order
            where = {int(t): i for i, t in enumerate(order)}
            targets = np.array([where[int(t)] for t in self.targets if int(t) in where], dtype=np.int64)
            if len(targets):
                norm, radius, angle = ring_place(E, np.arange(len(order)), targets, len(order))
                out.update(target_norm=norm, target_radius=radius, target_angle=angle)
        return out
