"""What a run measures and reports, shared by `Trainer` and the batched `ManyTrainer`.

One evaluation pass (loss, accuracy and per-example hits on a whole set), the metrics.csv columns, the
row of one evaluation, the per-token update counts, adaptive c's f_E (Prop. 4.1), the phases and the
summary are written here once; both trainers call them, so a metric added here reaches batched sweeps too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from engine.config import RunConfig
from engine.events import EvalLogged, Event, FourierLogged, TokensLogged
from engine.probes import ProbeSet
from engine.rundir import BASE_COLUMNS, LEARNED_ACC, RARE_COLUMNS, held_since
from engine.task import data as D
from engine.task.dataset import Dataset
from engine.task.metrics import RareTokenAccuracy, token_sets
from engine.train.adaptive import adaptive_ratio, f_e_of_batch, f_e_of_counts
from engine.train.phases import CircuitPhases, PhaseTracker

Scores = tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # mean loss, accuracy, per-example hits

EVAL_CHUNK = 8192  # examples per forward pass during evaluation

Loss = Callable[..., torch.Tensor]

N_SCORES = 4 + len(RARE_COLUMNS)  # train loss, train acc, val loss, val acc, the rare columns; then per token


@torch.no_grad()
def evaluate(
    forward: Callable[[torch.Tensor], torch.Tensor], loss_fn: Loss, x: torch.Tensor, y: torch.Tensor, chunk: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mean loss, accuracy (float64) and per-example hits of a model on a whole set, `chunk` examples a pass.

    x is (n, L) for one model, or (N, n, L) for N members whose `forward` maps (N, c, L) to (N, c, p); the
    results then carry the member axis. Nothing here syncs with the host.
    """
    batched = x.dim() == 3
    n = x.shape[-2]
    summed = torch.vmap(lambda lg, yy: loss_fn(lg, yy, reduction="sum")) if batched else None
    lead = x.shape[:1] if batched else ()
    loss = torch.zeros(lead, dtype=torch.float64, device=x.device)
    hits = []
    for i in range(0, n, chunk):
        xb, yb = x[..., i : i + chunk, :], y[..., i : i + chunk]
        logits = forward(xb)
        loss += (summed(logits, yb) if summed is not None else loss_fn(logits, yb, reduction="sum")).double()
        hits.append(logits.argmax(-1) == yb)
    hit = torch.cat(hits, -1) if hits else torch.zeros((*lead, 0), dtype=torch.bool, device=x.device)
    m = max(n, 1)
    return loss / m, hit.sum(-1).double() / m, hit


class RunMetrics:
    """One run's book-keeping: token update counts, f_E and c, phases, metrics rows and the summary.

    `updates` may be a view into a batched trainer's (N, V) counts; the owner adds to it in place.
    """

    def __init__(
        self, cfg: RunConfig, data: Dataset, device: torch.device, updates: torch.Tensor | None = None
    ) -> None:
        self.cfg = cfg
        V = cfg.data.vocab_size
        self.updates = updates if updates is not None else torch.zeros(V, dtype=torch.int64, device=device)
        # A fork's own window (engine/train/fork.py): its batch facts count the steps from the fork on only.
        self.window_step = 0
        self.window_updates = torch.zeros_like(self.updates)
        self.target = D.starved_tokens(cfg.data, cfg.train.seed)
        self.rare_train_pairs, self.rare_test_pairs = data.train_pairs, data.test_pairs
        self.rare = RareTokenAccuracy(
            data.train_pairs, data.test_pairs, cfg.data.p, V, cfg.probe.rare_k, device, self.target
        )
        self.tokens = token_sets(data.train_pairs, cfg.data.p, cfg.probe.rare_k, self.target)  # RunStarted, summary
        self.sampler: Any = None  # the run's batch sampler (engine/task/samplers.py), for its draw counts
        self.learned_from: list[int | None] = [None] * cfg.data.p  # start of each token's run >= LEARNED_ACC
        self.phases = PhaseTracker(cfg.train.target_val_acc, cfg.train.patience, cfg.train.stop_metric)
        self.circuit = CircuitPhases(cfg.data.p) if cfg.probe.progress_every else None  # from the progress probe
        self.lr_ratio = cfg.optim.lr_ratio
        self.f_e = float("nan")
        self.c_raw = cfg.optim.lr_ratio  # eq. 24 before the clamp (engine/train/adaptive.py)
        self.c_clamped = 0  # adaptations at which the clamp to [ratio_min, ratio_max] bound
        p = cfg.data.p
        self.present = torch.as_tensor(data.token_freq[:p], device=device) > 0  # operand tokens in training
        self.ratio_mark = (0, 0)  # (step, Σ updates) at the last adaptive update
        self.last_per_token: list[float] = []  # each operand token's val_acc at the last evaluation

    def measure_f_e(self, step: int, batch: torch.Tensor | None = None) -> float:
        """f_E (Prop. 4.1, engine/train/adaptive.py): the mean share of steps that update an operand token's row
        of E, over the tokens present in training, from `batch` (the first one, at step 0) or else from
        the update counts since the last adaptation. op and '=' are in every batch: counting them would
        pull f_E towards 1 and c down; absent tokens are never updated: counting them would push c up."""
        total = int(self.updates[: self.cfg.data.p].sum().item())  # absent tokens add 0: never in a batch
        if batch is not None:
            self.f_e = f_e_of_batch(batch, self.present)
        else:
            s0, u0 = self.ratio_mark
            self.f_e = f_e_of_counts(total - u0, step - s0, self.present)
        self.ratio_mark = (step, total)
        return self.f_e

    def adapt(
        self,
        step: int,
        model: nn.Module,
        batch: torch.Tensor | None = None,
        params: dict[str, torch.Tensor] | None = None,
    ) -> float:
        """Adaptive Adam-LR (Prop. 4.1, eq. 24): the new c from f_E (`measure_f_e`) and σmax of E and W, read
        from `params` (a batched member's slice) or the model's own weights. The caller sets the lr.
        With `optim.adaptive_once`, c is computed at step 0 only and kept (the paper's other reading)."""
        if self.cfg.optim.adaptive_once and step > 0:
            return self.lr_ratio
        f_e = self.measure_f_e(step, batch)
        r = adaptive_ratio(model, self.cfg, f_e, params)
        self.lr_ratio, self.c_raw = r.c, r.raw
        self.c_clamped += int(r.clamped)
        return self.lr_ratio

    def scores(self, train: Scores, test: Scores) -> torch.Tensor:
        """One evaluation's numbers as one device vector, read back with a single host sync: train loss,
        train acc, val loss, val acc, the RARE_COLUMNS (engine/task/metrics.py), then the per-token val_acc."""
        rare, per_token = self.rare.reduce(test[2])  # engine/task/metrics.py
        return torch.cat([torch.stack([train[0], train[1], test[0], test[1]]), rare, per_token])

    def events(
        self,
        step: int,
        epoch: int,
        wall_s: float,
        scores: list[float],
        lr: float,
        has_e: bool,
        probes: ProbeSet,
        updates: list[int],
    ) -> list[Event]:
        """The events of one evaluation: the metrics row with the probes due, the token counts and accuracies,
        and the Fourier spectrum when its probe ran; `scores` is `self.scores(...)` read back to the host."""
        row = self.row(step, epoch, wall_s, scores[:4], scores[4:N_SCORES], lr, has_e)
        self.observe_tokens(step, scores[N_SCORES:])
        result = probes.at_eval(step)
        row.update(result.metrics)
        self.phases.observe(step, row)  # after the probes: train.stop_metric may be a probe's column
        circuit = {}
        if self.circuit is not None:
            self.circuit.observe(step, row, self.phases.memorized_step)
            circuit = self.circuit.markers()
        out: list[Event] = [
            EvalLogged(step, row, **self.phases.markers(), **circuit),
            TokensLogged(step, tuple(updates), result.grad_norm, tuple(scores[N_SCORES:])),
        ]
        if result.fourier is not None:
            out.append(FourierLogged(step, result.fourier))
        if result.circuit is not None:
            out.append(result.circuit)
        return out

    def row(
        self, step: int, epoch: int, wall_s: float, vals: list[float], rare: list[float], lr: float, has_e: bool
    ) -> dict[str, float]:
        """The metrics.csv row of one evaluation; vals = train loss, train acc, val loss, val acc."""
        lr_embed = lr * self.lr_ratio if has_e else math.nan
        values = (step, epoch, wall_s, *vals, lr, lr_embed, self.lr_ratio, self.f_e, self.c_raw, *rare)
        return dict(zip(BASE_COLUMNS, values, strict=True))  # the names: engine/rundir/columns.py

    def observe_tokens(self, step: int, per_token: list[float]) -> None:
        """Track, per operand token, the evaluation since which its val_acc has stayed >= LEARNED_ACC
        (the running form of engine/rundir/columns.py learned_step)."""
        for t in range(self.cfg.data.p):
            self.learned_from[t] = held_since(self.learned_from[t], step, per_token[t], LEARNED_ACC)
        self.last_per_token = per_token[: self.cfg.data.p]

    def split_facts(self) -> dict[str, Any]:
        """The split's token facts a reader needs beside the metrics: coverage, the rare, absent and target
        sets and each token's training pairs (`tokens`, data.pairs_holding counts, (t, t) once), each
        target's training pairs m, the resolved train.target_rate and each token's realized share of the
        sampler's draws."""
        p = self.cfg.data.p
        tokens = self.tokens
        holding = tokens.train_pairs
        out: dict[str, Any] = {
            "coverage": D.coverage_ceiling(self.rare_train_pairs, self.rare_test_pairs, p),
            **tokens.fields(),
            "rare_k": len(tokens.rare),
            "target_pairs": [holding[t] for t in tokens.target],
        }
        if len(self.target):  # two targets in one training pair share its credit (engine/task/data.py)
            out["target_shared_pairs"] = D.shared_target_pairs(self.rare_train_pairs, self.target, p)
        s = self.sampler
        if s is not None:
            share = s.draw_share()
            out["target_rate"] = s.rate
            out["draw_share"] = [round(v, 6) for v in share]
            if len(self.target) and not math.isnan(share[0]):
                others = [share[t] for t in range(p) if holding[t] > 0 and t not in set(self.target.tolist())]
                med = float(np.median(others)) if others else math.nan
                out["target_draw_ratio"] = float(np.mean([share[t] for t in self.target])) / med if med else math.nan
            if self.cfg.train.sampler == "tail":
                out.update(self.tail_facts(share))
        return out

    def tail_facts(self, share: list[float]) -> dict[str, Any]:
        """The frequency tail's outcome (train.sampler = tail), by decile of tail rank, the most drawn first:
        each decile's mean per-token val_acc at the last evaluation and its realized share of draws."""
        from engine.task.samplers import tail_deciles

        acc = self.last_per_token
        out: dict[str, Any] = {"decile_draw_share": [], "decile_val_acc": []}
        for part in tail_deciles(self.cfg):
            vals = [acc[t] for t in part if acc and not math.isnan(acc[t])]
            out["decile_draw_share"].append(round(sum(share[t] for t in part), 6))
            out["decile_val_acc"].append(round(float(np.mean(vals)), 6) if vals else math.nan)
        return out

    def summary(self, status: str, steps: int, wall: float, device: str) -> dict[str, Any]:
        """summary.json's fields: status, steps, wall time and speed, the phases (engine/train/phases.py), the
        split's token facts (`split_facts`) and each operand token's learned step (None: not learned)."""
        c = self.cfg
        return {
            "status": status,
            "steps": steps,
            "wall_s": round(wall, 3),
            "steps_per_s": round(steps / wall, 2) if wall > 0 else 0.0,
            "device": device,
            "preset": c.preset,
            "seed": c.train.seed,
            "c_clamped": self.c_clamped,
            **self.phases.summary(),
            **(self.circuit.markers() if self.circuit is not None else {}),
            **self.split_facts(),
            "learned_acc": LEARNED_ACC,
            "learned_step": list(self.learned_from),
            **self.batch_facts(steps),
        }

    def batch_facts(self, steps: int) -> dict[str, Any]:
        """target_batch_share: the share of steps whose batch held a target, averaged over the targets (the
        rate at which a target's row of E is updated at all, eq. 4's p_i), beside the draw share. A fork
        counts its own window: the steps from its fork step on, not its parent's before them."""
        own = steps - self.window_step
        if not len(self.target) or own <= 0:
            return {}
        rows = torch.as_tensor(self.target, device=self.updates.device)
        held = (self.updates[rows] - self.window_updates[rows]).double() / own
        return {"target_batch_share": round(float(held.mean()), 6)}

    def state_dict(self) -> dict[str, Any]:
        return {
            "updates": self.updates.cpu(),
            "window_step": self.window_step,
            "window_updates": self.window_updates.cpu(),
            "lr_ratio": self.lr_ratio,
            "ratio_mark": self.ratio_mark,
            "f_e": self.f_e,
            "c_raw": self.c_raw,
            "c_clamped": self.c_clamped,
            "phases": self.phases.state_dict(),
            **({"circuit_phases": self.circuit.state_dict()} if self.circuit is not None else {}),
            "learned_from": [-1 if v is None else v for v in self.learned_from],
            "last_per_token": list(self.last_per_token),
        }

    def load_state_dict(self, s: dict[str, Any]) -> None:
        self.updates.copy_(s["updates"])
        self.window_step = int(s.get("window_step", 0))  # checkpoints before fork windows: the whole run
        if "window_updates" in s:
            self.window_updates.copy_(s["window_updates"])
        self.lr_ratio = s["lr_ratio"]
        self.ratio_mark = (int(s["ratio_mark"][0]), int(s["ratio_mark"][1]))
        self.f_e = s["f_e"]
        self.c_raw = s.get("c_raw", self.lr_ratio)
        self.c_clamped = int(s.get("c_clamped", 0))
        self.phases.load_state_dict(s["phases"])
        if self.circuit is not None and "circuit_phases" in s:
            self.circuit.load_state_dict(s["circuit_phases"])
        if "learned_from" in s:  # checkpoints before learned steps were tracked start tracking at the resume
            self.learned_from = [None if int(v) < 0 else int(v) for v in s["learned_from"]]
        self.last_per_token = [float(v) for v in s.get("last_per_token", [])]
