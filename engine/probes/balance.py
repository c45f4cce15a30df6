"""A row's balance between evaluations: what the loss gradient and the decay term push along each row of E.

§4.2's chain (eqs. 3-6): a token drawn in few batches gets few gradient updates, while weight decay shrinks
its row at every step. This probe measures both sides of that balance where they enter the optimizer, at
every step, projected on each row's own direction u = e_i/‖e_i‖ and summed over the window since the last
evaluation (positive: lengthens the row, negative: shortens it):
- grad_step:  Σ −∇_{e_i}L · u, the loss gradient as the optimizer receives it (after any gradient filter);
- decay_step: Σ −wd_i ‖e_i‖, the decay term: wd·θ added to the gradient under coupled L2 (adam, sgd), and
  the decoupled step divided by the group's lr under adamw, so both sides are in gradient units (one SGD
  step at lr 1). wd_i is the row's decay (optim.decay_sets); 0 on a step that leaves the row out under
  optim.lazy_rows;
- occurrences: how many times the token was drawn in the window's batches (a pair (t, t) once, as the
  samplers count draws); norm_change: ‖e_i‖ now minus at
  the window's start (what the optimizer made of the two pushes).
Logged per evaluation as the mean over the watched rows (the data.starve_k targets, else the rare tokens)
and the median over the other operand tokens: target_* and other_* in metrics.csv.
"""

from __future__ import annotations

from typing import Any

import torch

from engine.probes.base import NAN, Blocks, Probe, ProbeContext

SIDES = ("grad_step", "decay_step", "occurrences", "norm_change")


class BalanceProbe(Probe):
    """probe.balance: the loss gradient against the decay along each row of E, summed between evaluations."""

    name = "balance"

    def __init__(self, ctx: ProbeContext, blocks: Blocks) -> None:
        cfg = ctx.cfg
        super().__init__(1 if cfg.probe.balance and blocks.e_names else 0)
        self.columns = [f"{who}_{side}" for who in ("target", "other") for side in SIDES]
        if not self.enabled:
            return
        from engine.probes.masks import decay_masks
        from engine.task.metrics import split_tokens

        self.grad = ctx.grad
        self.e_name = blocks.e_names[0]
        self.E: torch.Tensor = blocks.params[self.e_name]
        sets = split_tokens(cfg)
        p = cfg.data.p
        watched = sorted(set(sets.target) or set(sets.rare))
        self.watched = torch.tensor(watched, dtype=torch.long)
        self.others = torch.tensor([t for t in range(p) if t not in set(watched)], dtype=torch.long)
        wd = decay_masks(ctx.model, cfg, sets)[self.e_name][:, 0]  # each row's decay (its d entries share it)
        self.wd = wd.to(device=self.E.device, dtype=torch.float64)
        self.lazy = cfg.optim.lazy_rows or cfg.optim.lazy_decay  # no decay on a step that does not draw the row
        from engine.task import data as D

        self.ca, self.cb = D.operand_columns(cfg.data)  # a draw of (a, b) counts for a and for b ≠ a, as the sampler's
        self.V = int(self.E.shape[0])
        self._reset()
        self.start: torch.Tensor | None = None  # the row norms at the window's start

    def _reset(self) -> None:
        dev = self.E.device
        self.sums = torch.zeros(2, self.V, dtype=torch.float64, device=dev)  # grad_step, decay_step
        self.occ = torch.zeros(self.V, dtype=torch.float64, device=dev)
        self.steps = 0

    def _norms(self) -> torch.Tensor:
        norms: torch.Tensor = self.E.detach().double().norm(dim=1)
        return norms

    @torch.no_grad()
    def on_step(self, x: torch.Tensor) -> None:
        g = self.grad(self.e_name)
        if g is None:
            return
        E = self.E.detach().double()
        norms = E.norm(dim=1)
        if self.start is None:
            self.start = norms.clone()
        a, b = x[:, self.ca], x[:, self.cb]
        counts = (torch.bincount(a, minlength=self.V) + torch.bincount(b[b != a], minlength=self.V)).double()
        self.sums[0] -= (g.double() * E).sum(1) / norms.clamp_min(1e-30)
        decay = self.wd * norms
        self.sums[1] -= decay * (counts > 0) if self.lazy else decay
        self.occ += counts
        self.steps += 1

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        norms = self._norms()
        if self.steps == 0 or self.start is None:  # no step in the window (the evaluation at step 0)
            self.start = norms.clone()
            return {}
        per_row = torch.stack([self.sums[0], self.sums[1], self.occ, norms - self.start]).cpu()  # (4, V)
        out: dict[str, Any] = {}
        for who, rows, pick in (("target", self.watched, "mean"), ("other", self.others, "median")):
            vals = per_row[:, rows] if len(rows) else None
            for k, side in enumerate(SIDES):
                if vals is None:
                    out[f"{who}_{side}"] = NAN
                else:
                    v = vals[k]
                    out[f"{who}_{side}"] = float(v.mean() if pick == "mean" else v.quantile(0.5))
        self.start = norms.clone()
        self._reset()
        return out

    def state_dict(self) -> dict[str, Any]:
        s = super().state_dict()
        if self.enabled:
            s.update(sums=self.sums.cpu(), occ=self.occ.cpu(), steps=self.steps)
            if self.start is not None:
                s["start"] = self.start.cpu()
        return s

    def load_state_dict(self, s: dict[str, Any]) -> None:
        super().load_state_dict(s)
        if self.enabled and "sums" in s:
            self.sums = s["sums"].to(self.sums.device)
            self.occ = s["occ"].to(self.occ.device)
            self.steps = int(s["steps"])
            self.start = s["start"].to(self.sums.device) if "start" in s else None
