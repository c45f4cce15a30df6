"""Many runs of one shape trained as one batched model: stacked parameters, vmap, a per-member Adam.

`train_many(configs)` yields `(member, event)` pairs; each member sees the same events, metrics and
summary that `Trainer(config)` would give it alone with the same seed (same split, init and batch
order), up to float rounding. Members may differ in seed, task, lr, c, weight decay and init scale;
everything that sets a shape or a code path must match (`why_not_batched`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F
from torch.func import functional_call

from engine import data as D
from engine.config import RunConfig
from engine.events import EvalLogged, Event, RunFinished, RunStarted, StepsTaken, TokensLogged
from engine.models import build_model, embedding_names
from engine.phases import PhaseTracker
from engine.trainer import BASE_COLUMNS, PROGRESS_EVERY, resolve_device

# Keys members may differ in; every other key must be equal across the batch.
FREE_KEYS = {
    ("train", "seed"),
    ("data", "op"),
    ("data", "skew"),
    ("optim", "lr"),
    ("optim", "lr_ratio"),
    ("optim", "weight_decay"),
    ("model", "embed_init_scale"),
    ("train", "target_val_acc"),
    ("train", "patience"),
}
FREE_TOP = {"preset", "description", "wall_time"}
EVAL_ROWS = 65536  # member × example rows per evaluation forward pass


def why_not_batched(cfgs: list[RunConfig]) -> str | None:
    """None if the configs can train as one batched model, else the reason."""
    if not cfgs:
        return "no members"
    c0 = cfgs[0]
    if c0.model.kind not in ("mlp_embed", "mlp_raw"):
        return f"model.kind {c0.model.kind} is not batched"
    if c0.train.sampler != "shuffle" or c0.optim.adaptive or c0.train.loss != "ce":
        return "only the shuffle sampler, fixed c and cross-entropy are batched"
    if c0.optim.grokfast_alpha > 0 or c0.optim.grokfast_lambda > 0 or c0.optim.orthogonal:
        return "gradient filters are not batched"
    if any(v for k, v in dataclasses.asdict(c0.probe).items() if k.endswith("_every")):
        return "probes are not batched"
    if c0.data.op == "div" and any(c.data.op != "div" for c in cfgs):
        return "div has p(p-1) pairs, the other ops p²"

    def shape(c: RunConfig) -> dict[str, Any]:
        d = c.to_dict()
        return {
            g: {k: v for k, v in t.items() if (g, k) not in FREE_KEYS} if isinstance(t, dict) else t
            for g, t in d.items()
            if g not in FREE_TOP
        }

    s0 = shape(c0)
    for c in cfgs[1:]:
        if shape(c) != s0:
            diff = [f"{g}.{k}" for g, t in s0.items() if isinstance(t, dict) for k in t if shape(c)[g].get(k) != t[k]]
            return f"members differ in {', '.join(diff) or 'shape'}"
    return None


class ManyTrainer:
    """N members as one model whose parameters carry a leading member axis."""

    def __init__(self, cfgs: list[RunConfig]) -> None:
        reason = why_not_batched(cfgs)
        if reason:
            raise ValueError(f"train_many: {reason}")
        self.cfgs = cfgs
        c0 = cfgs[0]
        self.N = N = len(cfgs)
        self.device = dev = resolve_device(c0.train.device)
        if c0.train.threads:
            torch.set_num_threads(c0.train.threads)
        torch.set_flush_denormal(True)  # as Trainer: subnormals slow CPU matmuls in the plateau
        self.dtype = torch.float64 if c0.train.dtype == "float64" else torch.float32
        sets, models = [], []
        for c in cfgs:  # the same data and init as Trainer(c)
            split = D.make_split(c.data, c.train.seed)
            pairs = D.operand_pairs(c.data)
            seqs, ys = D.tokens(c.data, pairs), D.labels(c.data, pairs)
            sets.append((seqs[split.train], ys[split.train], seqs[split.test], ys[split.test]))
            torch.manual_seed(c.train.seed)
            models.append(build_model(c).to(device=dev, dtype=self.dtype))
        if len({len(s[0]) for s in sets}) > 1 or len({len(s[2]) for s in sets}) > 1:
            raise ValueError("train_many: members' train or test sets differ in size")
        self.token_freq = [tuple(int(n) for n in D.token_counts(c.data, s[0])) for c, s in zip(cfgs, sets, strict=True)]
        self.x_train, self.y_train, self.x_test, self.y_test = (
            torch.stack([torch.as_tensor(s[i]) for s in sets]).to(dev) for i in range(4)
        )  # (N, n, L) and (N, n)
        self.template = models[0]
        e_names = set(embedding_names(self.template))
        self.params: dict[str, torch.Tensor] = {}
        for name, p in self.template.named_parameters():
            stacked = torch.stack([dict(m.named_parameters())[name].detach() for m in models])
            self.params[name] = stacked.requires_grad_(p.requires_grad)
        o = [c.optim for c in cfgs]
        lr = torch.tensor([x.lr for x in o], dtype=self.dtype, device=dev)
        self.lr = {
            n: lr * torch.tensor([x.lr_ratio for x in o], dtype=self.dtype, device=dev) if n in e_names else lr
            for n in self.params
        }
        self.wd = torch.tensor([x.weight_decay for x in o], dtype=self.dtype, device=dev)
        self.state = {n: (torch.zeros_like(p), torch.zeros_like(p)) for n, p in self.params.items() if p.requires_grad}
        self.n = self.x_train.shape[1]
        self.batch = min(c0.train.batch_size or self.n, self.n)
        self.steps_per_epoch = math.ceil(self.n / self.batch)
        self.gens = [torch.Generator().manual_seed(c.train.seed + 1) for c in cfgs]  # ShuffleSampler's
        self.perm: torch.Tensor | None = None
        self.pos = 0
        self.updates = torch.zeros(N, c0.data.vocab_size, dtype=torch.int64, device=dev)
        self.phases = [PhaseTracker(c.train.target_val_acc, c.train.patience) for c in cfgs]
        self.status: list[str | None] = [None] * N  # set when a member ends (early stop, divergence)
        self.ended_step = [0] * N
        self.step = 0
        self._stop: str | None = None
        self._t0 = 0.0

    def stop(self, status: str = "interrupted") -> None:
        self._stop = status

    def _next_batch(self) -> torch.Tensor:
        """(N, B) indices: each member's own shuffled epochs, exactly as ShuffleSampler draws them."""
        if self.batch == self.n:
            return torch.arange(self.n, device=self.device).expand(self.N, -1)
        if self.perm is None or self.pos >= self.n:
            self.perm = torch.stack([torch.randperm(self.n, generator=g) for g in self.gens]).to(self.device)
            self.pos = 0
        idx = self.perm[:, self.pos : self.pos + self.batch]
        self.pos += self.batch
        return idx

    def _logits(self, params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        """(N, B, L) -> (N, B, p): the member model applied to its own parameters and batch."""
        return torch.vmap(lambda p, xb: functional_call(self.template, p, (xb,)))(params, x)

    def _adam_step(self) -> None:
        """torch.optim.Adam / AdamW / SGD, elementwise per member, with per-member lr and weight decay."""
        o = self.cfgs[0].optim
        t = self.step + 1
        b1, b2 = o.betas
        with torch.no_grad():
            for name, (m, v) in self.state.items():
                p = self.params[name]
                shape = (self.N,) + (1,) * (p.dim() - 1)
                lr, wd, g = self.lr[name].view(shape), self.wd.view(shape), p.grad
                if o.name == "adamw":
                    p.mul_(1 - lr * wd)
                else:
                    g = g + wd * p  # coupled L2 (the paper's Adam)
                p.grad = None
                if o.name == "sgd":  # momentum buffer starts as the first gradient, as in torch.optim.SGD
                    m.mul_(o.momentum).add_(g)
                    p.sub_(lr * m)
                    continue
                m.lerp_(g, 1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                denom = (v.sqrt() / math.sqrt(1 - b2**t)).add_(o.eps)
                p.addcdiv_(m * (-lr / (1 - b1**t)), denom)

    @torch.no_grad()
    def _loss_acc(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = x.shape[1]
        chunk = max(EVAL_ROWS // self.N, 1)
        loss = torch.zeros(self.N, dtype=torch.float64, device=self.device)
        correct = torch.zeros(self.N, dtype=torch.int64, device=self.device)
        for i in range(0, n, chunk):
            logits = self._logits(self.params, x[:, i : i + chunk])
            yy = y[:, i : i + chunk]
            loss += F.cross_entropy(logits.transpose(1, 2), yy, reduction="none").double().sum(1)
            correct += (logits.argmax(2) == yy).sum(1)
        return loss / max(n, 1), correct.double() / max(n, 1)

    def _evaluate(self) -> Iterator[tuple[int, Event]]:
        tr, te = self._loss_acc(self.x_train, self.y_train), self._loss_acc(self.x_test, self.y_test)
        vals = torch.stack([tr[0], tr[1], te[0], te[1]], 1).tolist()  # (N, 4): one host sync
        updates = self.updates.tolist()
        wall = round(time.perf_counter() - self._t0, 4) if self._t0 else 0.0
        for i, c in enumerate(self.cfgs):
            if self.status[i] is not None:
                continue
            o = c.optim
            row = dict(zip(("train_loss", "train_acc", "val_loss", "val_acc"), vals[i], strict=True))
            lr_e = o.lr * o.lr_ratio if c.model.kind == "mlp_embed" else float("nan")
            row = {
                "step": self.step,
                "epoch": self.step // self.steps_per_epoch,
                "wall_s": wall,
                **row,
                "lr": o.lr,
                "lr_embed": lr_e,
                "lr_ratio": o.lr_ratio,
                "f_E": float("nan"),
            }
            ph = self.phases[i]
            ph.observe(self.step, row["train_acc"], row["val_acc"], row["train_loss"])
            yield i, EvalLogged(self.step, row)
            yield i, TokensLogged(self.step, tuple(updates[i]), None)
            if ph.diverged or ph.should_stop:
                self._end(i, "diverged" if ph.diverged else "finished")

    def _end(self, i: int, status: str) -> None:
        self.status[i], self.ended_step[i] = status, self.step

    def summary(self, i: int) -> dict[str, Any]:
        status, steps = self.status[i] or "running", self.ended_step[i] or self.step
        wall = time.perf_counter() - self._t0 if self._t0 else 0.0
        c = self.cfgs[i]
        return {
            "status": status,
            "steps": steps,
            "wall_s": round(wall, 3),
            "steps_per_s": round(steps / wall, 2) if wall > 0 else 0.0,
            "device": str(self.device),
            "preset": c.preset,
            "seed": c.train.seed,
            "batched": self.N,
            **self.phases[i].summary(),
        }

    def events(self) -> Iterator[tuple[int, Event]]:
        t = self.cfgs[0].train
        for i, c in enumerate(self.cfgs):
            yield (
                i,
                RunStarted(
                    c.to_dict(),
                    str(self.device),
                    self.n,
                    self.x_test.shape[1],
                    c.data.vocab_size,
                    self.token_freq[i],
                    0,
                    t.max_steps,
                    BASE_COLUMNS,
                ),
            )
        self._t0 = time.perf_counter()
        yield from self._evaluate()
        ar = torch.arange(self.N, device=self.device)[:, None]
        mark_t = self._t0
        while self.step < t.max_steps and any(s is None for s in self.status) and self._stop is None:
            idx = self._next_batch()
            x, y = self.x_train[ar, idx], self.y_train[ar, idx]  # (N, B, L), (N, B)
            logits = self._logits(self.params, x)
            losses = F.cross_entropy(logits.transpose(1, 2), y, reduction="none").mean(1)  # (N,)
            losses.sum().backward()  # members are independent: ∂(Σ L_j)/∂θ_i = ∂L_i/∂θ_i
            self._adam_step()
            self._count(x)
            self.step += 1
            if self.step % PROGRESS_EVERY == 0:
                finite = torch.isfinite(losses.detach()).tolist()
                now = time.perf_counter()
                sps = PROGRESS_EVERY / max(now - mark_t, 1e-9)
                mark_t = now
                for i, ok in enumerate(finite):
                    if self.status[i] is None:
                        if not ok:
                            self._end(i, "diverged")
                        else:
                            yield i, StepsTaken(self.step, self.step // self.steps_per_epoch, now - self._t0, sps)
            if self.step % t.eval_every == 0 or self.step == t.max_steps:
                yield from self._evaluate()
        for i in range(self.N):
            if self.status[i] is None:
                self._end(i, self._stop or "finished")
            yield i, RunFinished(self.status[i] or "finished", self.summary(i))

    def _count(self, x: torch.Tensor) -> None:
        """Per-member, per-token count of steps whose batch held the token."""
        present = torch.zeros_like(self.updates).scatter_(1, x.reshape(self.N, -1), 1)
        self.updates += present

    def member_state(self, i: int) -> dict[str, torch.Tensor]:
        """Member i's parameters as a `model.state_dict()`-shaped dict."""
        return {n: p[i].detach().clone() for n, p in self.params.items()}


def train_many(cfgs: list[RunConfig]) -> Iterator[tuple[int, Event]]:
    """Train the members as one batched model; yields (member index, event)."""
    return ManyTrainer(cfgs).events()
