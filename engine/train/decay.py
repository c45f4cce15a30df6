"""Weight decay per parameter set, and lazy rows of E: what reaches a row of E at a step (§4.2, eqs. 3-6).

§4.2's chain: a token drawn in few batches gets few gradient updates, while weight decay shrinks its row
of E at every step. Two optimizer settings cut that chain where the paper's optimizer does not:
- `optim.decay_sets` sets the decay per parameter set (`E[targets]=0`): torch's optimizers take one decay
  per parameter group, so with decay sets the optimizer is built without decay and `RowRules.before_step`
  applies it here, entry by entry: coupled L2 (the gradient gets wd·θ, before the moments) under adam and
  sgd, decoupled (θ ← θ·(1 − lr·wd), before the update) under adamw, as torch does for one number.
- `optim.lazy_rows`: a row of E whose token is not in the batch keeps its value and its optimizer state
  (moments, momentum) through the step, as TensorFlow's LazyAdam and torch's SparseAdam do: no decay,
  no moment decay, no step. Adam's step count is the optimizer's, shared, as in both of those.
- `optim.lazy_decay`: lazy rows' decay part alone. A row of E outside the batch gets no decay at the step;
  its moments take the step's zero gradient (m ← β₁m, v ← β₂v) and it steps on them, as without the
  option. Under coupled L2 the optimizer is built without decay and `before_step` adds wd·θ to the
  gradient of the drawn rows only; under adamw the decoupled shrink skips the undrawn rows.
- `optim.equal_rows`: after the step, the operand rows of E are set to one distance from the ring's
  centre (engine/train/row_norms.py): the rescale intervention applied to every row at every step.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from engine.config import RunConfig
from engine.events import TokenSets
from engine.models import embedding_names
from engine.probes.masks import decay_masks
from engine.train.row_norms import RowEqualizer


class RowRules:
    """One optimizer's decay sets and lazy rows, over the module it steps.

    `members` are the configs and token sets of the members it steps, in order: one for a single run or a
    member alone, n for a range of a stacked model, whose parameters then lead with that member axis.
    """

    def __init__(
        self,
        opt: torch.optim.Optimizer,
        module: nn.Module,
        template: nn.Module,
        members: list[tuple[RunConfig, TokenSets]],
        stacked: bool,
    ) -> None:
        cfg = members[0][0]
        self.opt = opt
        self.coupled = cfg.optim.name != "adamw"  # adam and sgd: L2 in the gradient; adamw: decoupled
        self.stacked = stacked
        params = dict(module.named_parameters())
        self.decays: list[tuple[nn.Parameter, torch.Tensor, dict[str, Any]]] = []
        if cfg.optim.decay_sets or cfg.optim.lazy_decay:
            per_member = [decay_masks(template, c, s) for c, s in members]
            group_of = {id(p): g for g in opt.param_groups for p in g["params"]}
            for n, p in params.items():
                if not p.requires_grad:
                    continue
                wd = torch.stack([m[n] for m in per_member]) if stacked else per_member[0][n]
                wd = wd.to(device=p.device, dtype=p.dtype)
                if bool((wd != 0).any()):
                    self.decays.append((p, wd, group_of[id(p)]))
        e = embedding_names(template)
        self.lazy = e[0] if cfg.optim.lazy_rows and e else ""
        self.e_param = params[self.lazy] if self.lazy else None
        self.vocab = int(template.get_parameter(e[0]).shape[0]) if e else 0
        # decay only when drawn: the embedding's decay is masked by the step's present rows
        self.lazy_decay = params[e[0]] if cfg.optim.lazy_decay and e else None
        self.equal = RowEqualizer(params[e[0]], cfg) if cfg.optim.equal_rows and e else None
        self._present: torch.Tensor | None = None  # (n, V, 1) or (V, 1): the rows in this step's batch
        self._saved: list[tuple[torch.Tensor, torch.Tensor]] = []
        self._absent: torch.Tensor | None = None
        self._fresh = False

    @torch.no_grad()
    def before_step(self, x: torch.Tensor) -> None:
        """Before the optimizer's step, with its members' batches x (n, B, L): save the rows lazy rows keep,
        then the decay sets' decay (which the saved rows are spared, being put back after the step)."""
        if self.e_param is not None or self.lazy_decay is not None:
            self._present = self._rows_in(x)
        if self.e_param is not None:
            self._keep_absent_rows()
        for p, wd, group in self.decays:
            if p.grad is None:
                continue
            if p is self.lazy_decay:
                assert self._present is not None
                wd = wd * self._present  # §4.2's decay between draws taken away: only drawn rows decay
            if self.coupled:
                p.grad.add_(p * wd)  # coupled L2: wd·θ joins the gradient before the moments (§5's Adam)
            else:
                p.mul_(1 - group["lr"] * wd)  # AdamW's decoupled decay, at the group's lr (lr·c for E)

    @torch.no_grad()
    def after_step(self) -> None:
        """Put back the rows of E that were not in the batch, and their optimizer state; then equalize."""
        self._restore_absent_rows()
        if self.equal is not None:
            self.equal.apply()

    def _restore_absent_rows(self) -> None:
        if self._absent is None:
            return
        p = self.e_param
        assert p is not None
        keep = self._absent
        for live, saved in self._saved:
            live.copy_(torch.where(keep, saved, live))
        if self._fresh:  # the state was made by this step: absent rows keep the zeros it starts from
            for v in self.opt.state[p].values():
                if isinstance(v, torch.Tensor) and v.shape == p.shape:
                    v.masked_fill_(keep, 0)
        self._saved, self._absent = [], None

    def _rows_in(self, x: torch.Tensor) -> torch.Tensor:
        """The rows of E in each member's batch x (n, B, L): (n, V, 1) stacked, else (V, 1); bool."""
        tokens = x.reshape(x.shape[0], -1)  # (n, B·L): each member's batch tokens
        present = torch.zeros(tokens.shape[0], self.vocab, dtype=torch.bool, device=x.device)
        present.scatter_(1, tokens, True)
        rows = present[:, :, None]  # (n, V, 1): broadcasts over d
        return rows if self.stacked else rows[0]

    def _keep_absent_rows(self) -> None:
        p = self.e_param
        assert p is not None and self._present is not None
        self._absent = ~self._present
        state = self.opt.state.get(p, {})
        self._fresh = not state
        tensors = [p, *(v for v in state.values() if isinstance(v, torch.Tensor) and v.shape == p.shape)]
        self._saved = [(t, t.detach().clone()) for t in tensors]


def row_rules(loop: Any) -> list[tuple[slice, RowRules]]:
    """(its members, RowRules) for each optimizer of a training loop (engine/train/loop.py) that has decay
    sets, lazy rows, decay only when drawn or equal rows; the members' slice picks their batches out of the
    loop's (N, B, L)."""
    from engine.task.metrics import split_tokens

    out = []
    for opt, module, (a, b) in zip(loop.opts, loop.opt_modules, loop.ranges, strict=True):
        c = loop.cfgs[a]
        if c.optim.decay_sets or c.optim.lazy_rows or c.optim.lazy_decay or c.optim.equal_rows:
            members = [(loop.cfgs[i], split_tokens(loop.cfgs[i])) for i in range(a, b)]
            out.append((slice(a, b), RowRules(opt, module, loop.weights.template, members, b - a > 1)))
    return out
