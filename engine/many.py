"""Many runs of one shape trained as one batched model: stacked parameters, vmap, a per-member optimizer.

`train_many(configs)` yields `(member, event)` pairs; each member sees the same events, metrics and
summary that `Trainer(config)` would give it alone with the same seed (same split, init, sampler draws,
c and probes), up to float rounding. The data set-up, evaluation, metrics row, phases and summary are
`Trainer`'s own (engine/dataset.py, engine/evaluation.py), the samplers and probes are built per member
from the same classes, and `member_state_dict(i)` is a `Trainer` checkpoint of member i. Members may
differ in seed, task, lr, c, weight decay and init scale; everything that sets a shape or a code path
must match (`why_not_batched`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator, Iterator
from typing import Any

import torch
from torch.func import functional_call

from engine.columns import BASE_COLUMNS
from engine.config import RunConfig
from engine.dataset import Dataset, load_dataset
from engine.evaluation import RunMetrics, Scores, evaluate
from engine.events import Event, RunFinished, RunStarted, StepsTaken
from engine.losses import build_loss
from engine.models import build_model, embedding_names
from engine.optim import build_optimizer, lr_at, scheduled
from engine.probes import ProbeSet
from engine.probes.base import ProbeContext
from engine.samplers import Sampler, build_sampler
from engine.trainer import PROGRESS_EVERY, resolve_device

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
FREE_TOP = {"preset", "description"}
EVAL_ROWS = 65536  # member × example rows per evaluation forward pass


def why_not_batched(cfgs: list[RunConfig]) -> str | None:
    """None if the configs can train as one batched model, else the reason."""
    if not cfgs:
        return "no members"
    c0 = cfgs[0]
    if c0.model.kind not in ("mlp_embed", "mlp_raw"):
        return f"model.kind {c0.model.kind} is not batched"
    if c0.optim.grokfast_alpha > 0 or c0.optim.grokfast_lambda > 0 or c0.optim.orthogonal:
        return "gradient filters are not batched"
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

    def __init__(self, cfgs: list[RunConfig], states: list[dict[str, Any]] | None = None) -> None:
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
        self.data: list[Dataset] = []
        models = []
        for c in cfgs:  # the same data and init as Trainer(c)
            self.data.append(load_dataset(c.data, c.train.seed, dev))
            torch.manual_seed(c.train.seed)
            models.append(build_model(c).to(device=dev, dtype=self.dtype))
        if len({len(d.x_train) for d in self.data}) > 1 or len({len(d.x_test) for d in self.data}) > 1:
            raise ValueError("train_many: members' train or test sets differ in size")
        self.x_train, self.y_train, self.x_test, self.y_test = (
            torch.stack([getattr(d, k) for d in self.data]) for k in ("x_train", "y_train", "x_test", "y_test")
        )  # (N, n, L) and (N, n)
        self.template = models[0]
        self.e_names = embedding_names(self.template)
        self.params: dict[str, torch.Tensor] = {}
        for name, p in self.template.named_parameters():
            stacked = torch.stack([dict(m.named_parameters())[name].detach() for m in models])
            self.params[name] = stacked.requires_grad_(p.requires_grad)
        self.wd = torch.tensor([c.optim.weight_decay for c in cfgs], dtype=self.dtype, device=dev)
        self.state = {n: (torch.zeros_like(p), torch.zeros_like(p)) for n, p in self.params.items() if p.requires_grad}
        self.loss_fn = build_loss(c0.train.loss)
        self.samplers: list[Sampler] = [build_sampler(c, d.x_train, dev) for c, d in zip(cfgs, self.data, strict=True)]
        self.n = self.x_train.shape[1]
        self.steps_per_epoch = self.samplers[0].steps_per_epoch
        self.updates = torch.zeros(N, c0.data.vocab_size, dtype=torch.int64, device=dev)
        self.runs = [
            RunMetrics(c, d, dev, self.updates[i]) for i, (c, d) in enumerate(zip(cfgs, self.data, strict=True))
        ]
        self.probes = [ProbeSet(self._probe_context(i)) for i in range(N)]
        self.columns = BASE_COLUMNS + tuple(self.probes[0].columns())
        self.status: list[str | None] = [None] * N  # set when a member ends (early stop, divergence)
        self.ended_step = [0] * N
        self._final: dict[int, dict[str, Any]] = {}  # checkpoints of the members that ended
        self.step = 0
        self.wall_offset = 0.0
        self._stop: str | None = None
        self._t0 = 0.0
        if states is not None:
            for i, s in enumerate(states):
                self.load_member_state_dict(i, s)
        self._set_lr()

    def _probe_context(self, i: int) -> ProbeContext:
        """Member i as its probes see it: views of its slices of the stacked parameters and gradients."""

        def grad(name: str) -> torch.Tensor | None:
            g = self.params[name].grad
            return g[i] if g is not None else None

        d = self.data[i]
        params = {n: p.detach()[i] for n, p in self.params.items()}
        return ProbeContext(
            self.cfgs[i],
            self.template,
            params,
            self.loss_fn,
            d.x_train,
            d.y_train,
            grad,
            lambda: self._stop is not None,
        )

    def stop(self, status: str = "interrupted") -> None:
        """End every member at the next step with this status."""
        self._stop = status

    def _set_lr(self) -> None:
        """Per-member lr of each parameter at this step: lr (scheduled) on W and the rest, c·lr on E."""
        lrs = [lr_at(c, self.step) for c in self.cfgs]
        base = torch.tensor(lrs, dtype=self.dtype, device=self.device)
        emb = torch.tensor([lr * r.lr_ratio for lr, r in zip(lrs, self.runs, strict=True)], dtype=self.dtype)
        emb = emb.to(self.device)
        self.lr = {n: emb if n in self.e_names else base for n in self.params}

    def _logits(self, params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        """(N, B, L) -> (N, B, p): the member model applied to its own parameters and batch."""
        return torch.vmap(lambda p, xb: functional_call(self.template, p, (xb,)))(params, x)

    def _optimizer_step(self) -> None:
        """torch.optim.Adam / AdamW / SGD, elementwise per member, with per-member lr and weight decay."""
        o = self.cfgs[0].optim
        t = self.step + 1
        b1, b2 = o.betas
        with torch.no_grad():
            for name, (m, v) in self.state.items():
                p = self.params[name]
                g = p.grad
                if g is None:
                    continue
                shape = (self.N,) + (1,) * (p.dim() - 1)
                lr, wd = self.lr[name].view(shape), self.wd.view(shape)
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

    def _wall(self) -> float:
        return self.wall_offset + (time.perf_counter() - self._t0 if self._t0 else 0.0)

    def _evaluate(self) -> Iterator[tuple[int, Event]]:
        """Trainer's evaluation for every running member: one forward pass over all of them, one host sync."""
        chunk = max(EVAL_ROWS // self.N, 1)

        def forward(xb: torch.Tensor) -> torch.Tensor:
            return self._logits(self.params, xb)

        tr = evaluate(forward, self.loss_fn, self.x_train, self.y_train, chunk)
        te = evaluate(forward, self.loss_fn, self.x_test, self.y_test, chunk)
        host = torch.stack([r.scores(_member(tr, i), _member(te, i)) for i, r in enumerate(self.runs)]).tolist()
        updates = self.updates.tolist()
        wall = round(self._wall(), 4)
        epoch = self.step // self.steps_per_epoch
        for i, c in enumerate(self.cfgs):
            if self.status[i] is not None:
                continue
            run = self.runs[i]
            lr = lr_at(c, self.step)
            for ev in run.events(self.step, epoch, wall, host[i], lr, bool(self.e_names), self.probes[i], updates[i]):
                yield i, ev
            if run.phases.diverged or run.phases.should_stop:
                self._end(i, "diverged" if run.phases.diverged else "finished")

    def _end(self, i: int, status: str) -> None:
        """Member i is done: its results and its checkpoint stay as they are now, while the batch trains on."""
        self.status[i], self.ended_step[i] = status, self.step
        ph = self.runs[i].phases
        if status == "diverged" and ph.diverged_step is None:
            ph.diverged_step = self.step
        self._final[i] = _to_cpu(self._member_state(i))

    def summary(self, i: int, status: str | None = None) -> dict[str, Any]:
        """Member i's summary.json fields, as `Trainer.summary` gives them, plus the batch size; `status`
        (a failure's) overrides the member's own."""
        status, steps = status or self.status[i] or "running", self.ended_step[i] or self.step
        return {**self.runs[i].summary(status, steps, self._wall(), str(self.device)), "batched": self.N}

    def _adapt(self, x: torch.Tensor | None = None) -> None:
        """Adaptive Adam-LR (Prop. 4.1) for each member, as Trainer._adapt_ratio: f_E from the first batch
        x (N, B, L) at step 0, then from each member's update counts; σmax from its own weights."""
        for i, run in enumerate(self.runs):
            params = {n: p.detach()[i] for n, p in self.params.items()}
            run.adapt(self.step, self.template, x[i] if x is not None else None, params)
        self._set_lr()

    def events(self) -> Generator[tuple[int, Event], None, None]:
        """The members' event streams, interleaved: (member index, event), each member's in Trainer's order."""
        c0 = self.cfgs[0]
        t, o = c0.train, c0.optim
        for i, c in enumerate(self.cfgs):
            d = self.data[i]
            yield (
                i,
                RunStarted(
                    c.to_dict(),
                    str(self.device),
                    len(d.x_train),
                    len(d.x_test),
                    c.data.vocab_size,
                    d.token_freq,
                    self.step,
                    t.max_steps,
                    self.columns,
                ),
            )
        self._t0 = time.perf_counter()
        if self.step == 0:
            yield from self._evaluate()
        ar = torch.arange(self.N, device=self.device)[:, None]
        wants_grad = [s.wants_grad for s in self.samplers]
        per_member_step = any(wants_grad) or any(p.steps for p in self.probes)  # else skip the loop over members
        lr_scheduled = scheduled(c0)
        e_name = self.e_names[0] if self.e_names else ""
        mark_t = time.perf_counter()
        losses: torch.Tensor | None = None
        while self.step < t.max_steps and any(s is None for s in self.status) and self._stop is None:
            idx = torch.stack([s.next() for s in self.samplers])  # (N, B): each member's own draws
            x, y = self.x_train[ar, idx], self.y_train[ar, idx]  # (N, B, L), (N, B)
            if o.adaptive and self.step == 0:
                self._adapt(x)  # c from the first step on
            logits = self._logits(self.params, x)
            losses = torch.vmap(self.loss_fn)(logits, y)  # (N,)
            losses.sum().backward()  # members are independent: ∂(Σ L_j)/∂θ_i = ∂L_i/∂θ_i
            g_e = self.params[e_name].grad if e_name and per_member_step else None
            if g_e is not None:
                for i, s in enumerate(self.samplers):
                    if wants_grad[i]:
                        s.observe(x[i], g_e[i])
                    self.probes[i].on_step(x[i])
            if lr_scheduled:
                self._set_lr()
            self._optimizer_step()
            self._count(x)
            self.step += 1
            if o.adaptive and self.step % o.adaptive_every == 0:
                self._adapt()
            progress = self.step % PROGRESS_EVERY == 0
            if progress:
                for i, ok in enumerate(torch.isfinite(losses.detach()).tolist()):
                    if self.status[i] is None and not ok:
                        self._end(i, "diverged")
            if self.step % t.eval_every == 0 or self.step == t.max_steps:
                yield from self._evaluate()
            if progress:  # after the step's rows, as in Trainer: a checkpoint on it holds no unlogged step
                now = time.perf_counter()
                sps = PROGRESS_EVERY / max(now - mark_t, 1e-9)
                mark_t = now
                for i in range(self.N):
                    if self.status[i] is None:
                        yield i, StepsTaken(self.step, self.step // self.steps_per_epoch, self._wall(), sps)
        finite = torch.isfinite(losses.detach()).tolist() if losses is not None else [True] * self.N
        for i in range(self.N):
            if self.status[i] is None:  # the last steps' NaN check, as Trainer's after its loop
                self._end(i, (self._stop or "finished") if finite[i] else "diverged")
            yield i, RunFinished(self.status[i] or "finished", self.summary(i))

    def _count(self, x: torch.Tensor) -> None:
        """Per-member, per-token count of steps whose batch held the token."""
        present = torch.zeros_like(self.updates).scatter_(1, x.reshape(self.N, -1), 1)
        self.updates += present

    # --- checkpoints: one per member, in Trainer's format --------------------------------------

    def _member_model(self, i: int) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
        """A solo model holding member i's weights, and the optimizer `Trainer` would build for it."""
        c = self.cfgs[i]
        model = build_model(c).to(device=self.device, dtype=self.dtype)
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.copy_(self.params[n][i])
        return model, build_optimizer(model, c)

    def member_state_dict(self, i: int) -> dict[str, Any]:
        """Member i's checkpoint, as `Trainer.state_dict` writes it: `Trainer(cfg, state)` goes on from here.

        A member that ended (early stop, divergence) keeps the checkpoint of the step where it ended.
        """
        return self._final[i] if i in self._final else self._member_state(i)

    def _member_state(self, i: int) -> dict[str, Any]:
        model, opt = self._member_model(i)
        named = dict(model.named_parameters())
        sgd = self.cfgs[i].optim.name == "sgd"
        for n, (m, v) in self.state.items():
            p = named[n]
            if sgd:
                opt.state[p] = {"momentum_buffer": m[i].clone()}
            else:
                step = torch.tensor(float(self.step), dtype=torch.float32, device=self.device)
                opt.state[p] = {"step": step, "exp_avg": m[i].clone(), "exp_avg_sq": v[i].clone()}
        run = self.runs[i]
        return {
            "step": self.step,
            "wall_s": self._wall(),
            "model": model.state_dict(),
            "opt": opt.state_dict(),
            "sampler": self.samplers[i].state_dict(),
            **run.state_dict(),
            "probes": self.probes[i].state_dict(),
            "grad_hooks": [],
            "rng": torch.get_rng_state(),
        }

    def load_member_state_dict(self, i: int, s: dict[str, Any]) -> None:
        """Start member i from a `Trainer` checkpoint; every member of a batch must be at the same step."""
        if i and s["step"] != self.step:
            raise ValueError(f"train_many: members resume at different steps ({self.step} and {s['step']})")
        self.step, self.wall_offset = int(s["step"]), float(s["wall_s"])
        model, opt = self._member_model(i)
        model.load_state_dict(s["model"])
        opt.load_state_dict(s["opt"])
        with torch.no_grad():
            for n, p in model.named_parameters():
                self.params[n][i] = p.detach()
                st = opt.state.get(p, {})
                if n in self.state and st:
                    m, v = self.state[n]
                    if "momentum_buffer" in st:
                        m[i] = st["momentum_buffer"]
                    else:
                        m[i], v[i] = st["exp_avg"], st["exp_avg_sq"]
        self.samplers[i].load_state_dict(s["sampler"])
        self.runs[i].load_state_dict(s)
        self.probes[i].load_state_dict(s["probes"])


def _member(scores: Scores, i: int) -> Scores:
    """Member i's slice of a batched evaluation's (loss, accuracy, hits)."""
    return scores[0][i], scores[1][i], scores[2][i]


def _to_cpu(obj: Any) -> Any:
    """A checkpoint's tensors moved to the CPU (an ended member's state waits there for the end of the batch)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().clone()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


def train_many(cfgs: list[RunConfig]) -> Iterator[tuple[int, Event]]:
    """Train the members as one batched model; yields (member index, event)."""
    return ManyTrainer(cfgs).events()
