"""A member's checkpoint in the loop of N members (engine/train/loop.py): written as its single run's
`Trainer` writes it, and read back into its row of the stack, its optimizer state included (its row of
the optimizer it shares, engine/train/optim.py `member_state` and `load_member`)."""

from __future__ import annotations

from typing import Any

import torch

from engine.config import RunConfig
from engine.probes import ProbeSet
from engine.task.samplers import Sampler
from engine.train.evaluation import RunMetrics
from engine.train.optim import apply_lr, build_optimizer, load_member, lr_at, member_state, plain_lrs
from engine.train.weights import Weights


class MemberCheckpoints:
    """`TrainLoop`'s checkpoints, one per member, in one format; the loop holds the state they read."""

    cfgs: list[RunConfig]
    weights: Weights
    ranges: list[tuple[int, int]]  # each optimizer's members, [a, b)
    opts: list[torch.optim.Optimizer]
    opt_of: list[int]  # member -> its optimizer
    samplers: list[Sampler]
    runs: list[RunMetrics]
    probe_sets: list[ProbeSet]
    step: int
    wall_offset: float
    _final: dict[int, dict[str, Any]]  # checkpoints of members that ended while others train on

    def wall_s(self) -> float:
        raise NotImplementedError

    def member_state_dict(self, i: int) -> dict[str, Any]:
        """Member i's checkpoint: `Trainer(cfg, state)` goes on from here, bit for bit where it is alone.

        A member that ended while the batch trained on keeps the checkpoint of the step where it ended.
        """
        return self._final[i] if i in self._final else self._member_state(i)

    def _member_state(self, i: int) -> dict[str, Any]:
        model = self.weights.module(i).state_dict()
        if self.weights.batched:  # views of the stacked tensors: saved alone, not with the whole stack
            model = {k: v.clone() for k, v in model.items()}
        return {
            "step": self.step,
            "wall_s": self.wall_s(),
            "model": model,
            "opt": self._member_opt_state(i),
            "sampler": self.samplers[i].state_dict(),
            **self.runs[i].state_dict(),
            "probes": self.probe_sets[i].state_dict(),
            "grad_hooks": [
                h.state_dict() for h in self.weights.grad_hooks
            ],  # Grokfast's EMA (engine/train/gradfilters.py)
            "rng": torch.get_rng_state(),
        }

    def _member_opt_state(self, i: int) -> dict[str, Any]:
        """Member i's optimizer state_dict as its single run's optimizer writes it."""
        k = self.opt_of[i]
        a, b = self.ranges[k]
        if b == a + 1:
            return plain_lrs(self.opts[k].state_dict())
        return member_state(self.opts[k], i - a, build_optimizer(self.weights.module(i), self.cfgs[i]))

    def load_member_state(self, i: int, s: dict[str, Any]) -> None:
        """Continue member i from a checkpoint (`member_state_dict`); the loop's members share one step."""
        a, b = self.ranges[self.opt_of[i]]
        opt = self.opts[self.opt_of[i]]
        if i and s["step"] != self.step:
            raise ValueError(f"members' checkpoints at different steps ({self.step}, {s['step']})")
        self.step = s["step"]
        self.wall_offset = max(self.wall_offset, s["wall_s"]) if i else s["wall_s"]
        self.weights.module(i).load_state_dict(s["model"])
        if b == a + 1:
            opt.load_state_dict(s["opt"])
        else:  # its row of the optimizer it shares (engine/train/optim.py `load_member`)
            load_member(opt, i - a, build_optimizer(self.weights.module(i), self.cfgs[i]), s["opt"])
        if s["sampler"] is not None:  # None: a fork that changed the sampler or the data starts a fresh one
            self.samplers[i].load_state_dict(s["sampler"])
        self.runs[i].load_state_dict(s)
        apply_lr(opt, lr_at(self.cfgs[i], self.step), self.runs[i].lr_ratio)
        self.probe_sets[i].load_state_dict(s["probes"])
        for hook, hs in zip(self.weights.grad_hooks, s.get("grad_hooks", []), strict=False):  # gradient-filter state
            hook.load_state_dict(hs)
        torch.set_rng_state(s["rng"])
