"""Row-norm equalization (`optim.equal_rows`): every operand row of E held at one distance from the ring's centre.

§4.2's chain ends in a rarely drawn row that weight decay has shrunk towards the ring's centre while its
direction joins the ring; the rescale intervention (engine/train/interventions.py, `rescale:TOKENS=ring`)
undid the norm alone and the starved targets rose at once (docs/claims/decouple_paper.md). This applies
the same move to every row at every step, naming no token: after the optimizer's step, each row on the
task's group axis is moved along its direction from the ring's centre to the mean distance of those rows
from it. The centre is the one the rescale intervention and the targets probe use: the constant term of
the best-fitting ring centre + A cos θ + B sin θ over the axis rows (engine/probes/targets.py `ring_fit`),
here fitted to all of them at once; the radius is their mean distance where the intervention takes the
median of the others. The op and `=` rows, and an operand off the axis (token 0 on mul and div), are
left as the step left them; a task with no group axis (poly) takes the operand rows' mean as the centre.
"""

from __future__ import annotations

import math

import torch

from engine.config import ConfigError, RunConfig
from engine.task.dlog import SIGNS, group_axis


def ring_projections(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """For each frequency w in 1 <= w < n/2 (`ring_fit`'s), the design X_w (W, n, 3) of [1, cos θ, sin θ]
    at θ = 2πw·i/n over the axis positions i, and its least-squares solver (XᵀX)⁻¹Xᵀ (W, 3, n), float64."""
    i = torch.arange(n, dtype=torch.float64)
    ws = torch.arange(1, (n + 1) // 2, dtype=torch.float64)
    theta = 2 * math.pi * ws[:, None] * i[None, :] / n  # (W, n)
    X = torch.stack([torch.ones_like(theta), theta.cos(), theta.sin()], -1)  # (W, n, 3)
    return X, torch.linalg.pinv(X)  # pinv: (W, 3, n)


def ring_centres(rows: torch.Tensor, X: torch.Tensor, solve: torch.Tensor) -> torch.Tensor:
    """The centre of the best-fitting ring of `rows` (..., n, d), in axis order: the constant of the fit
    with the least residual over the frequencies of X (W, n, 3); (..., d)."""
    coef = solve @ rows[..., None, :, :]  # (W, 3, n) @ (..., 1, n, d) -> (..., W, 3, d)
    resid = (rows[..., None, :, :] - X @ coef).square().sum((-1, -2))  # (..., W)
    best = resid.argmin(-1)  # the first of equal residuals, as ring_fit keeps the first best
    pick = best[..., None, None, None].expand(*best.shape, 1, 3, coef.shape[-1])
    return coef.gather(-3, pick)[..., 0, 0, :]


def equalize(E: torch.Tensor, order: torch.Tensor, X: torch.Tensor | None, solve: torch.Tensor | None) -> torch.Tensor:
    """Move rows `order` of E (..., V, d) in place along their directions from the ring's centre to their
    mean distance from it; returns the centre (..., d), float64. X and solve from `ring_projections`, or
    None where the task has no axis (the centre is then the rows' mean)."""
    rows = E[..., order, :].double()  # (..., n, d) in axis order
    c = rows.mean(-2) if X is None or solve is None else ring_centres(rows, X, solve)
    off = rows - c[..., None, :]
    dist = off.norm(dim=-1, keepdim=True)  # (..., n, 1)
    radius = dist.mean(-2, keepdim=True)
    moved = c[..., None, :] + torch.where(dist > 0, off * (radius / dist.clamp_min(1e-300)), off)
    E[..., order, :] = moved.to(E.dtype)
    return c


class RowEqualizer:
    """`optim.equal_rows` on one embedding parameter: (V, d), or (n, V, d) for n stacked members."""

    def __init__(self, E: torch.Tensor, cfg: RunConfig) -> None:
        self.E = E
        d = cfg.data
        if d.op in SIGNS:
            axis = group_axis(d)
            self.order = torch.as_tensor(axis.order, device=E.device)
            X, solve = ring_projections(axis.n)
            self.X: torch.Tensor | None = X.to(E.device)
            self.solve: torch.Tensor | None = solve.to(E.device)
        else:
            self.order = torch.arange(d.p, device=E.device)
            self.X = self.solve = None
        self.centre: torch.Tensor | None = None  # the last step's centre, (..., d) float64
        if len(self.order) < 2:
            raise ConfigError("optim.equal_rows: needs at least two operand rows of E")

    @torch.no_grad()
    def apply(self) -> torch.Tensor:
        """Equalize after the optimizer's step; the centre (..., d) it measured from."""
        self.centre = equalize(self.E, self.order, self.X, self.solve)
        return self.centre
