"""The training step, written once over a leading member axis (N = 1 for a single run).

`TrainLoop` trains N members in lockstep and yields `(member, event)`: sample, adapt c, forward,
backward, gradient hooks, sampler and probe observation, the lr schedule, the optimizer step, the
token update counts, the NaN check, the evaluation, then `StepsTaken`. `Trainer` (engine/train/trainer.py)
is this loop with one member and a pause; `ManyTrainer` (engine/train/many.py) the loop with N members
stacked as one batched model. What differs per member (seed, task, lr, c, weight decay) is data.

Where the members' weights live is a `Weights` (engine/train/weights.py): one module, or parameters stacked
on a leading member axis. The optimizers are `torch.optim`'s from `build_optimizer`: one per run of
neighbouring members whose settings are equal for the whole run (`shared_ranges`), over their rows of
the stacked tensors, else one per member (an adaptive c is each member's own). A member's checkpoint
holds its optimizer state in torch's single-run format, its row of its range's (`member_state`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any

import torch

from engine.config import ConfigError, RunConfig
from engine.events import Event, RunFinished, RunStarted, StatusChanged, StepsTaken
from engine.models import build_model
from engine.probes import ProbeSet
from engine.probes.fourier import FourierProbe, share_fourier
from engine.probes.gradients import GradProbe, share_grads
from engine.probes.spectra import RankProbe, share_spectra
from engine.rundir import BASE_COLUMNS
from engine.status import Status
from engine.summary import RunSummary
from engine.task.dataset import Dataset, load_dataset
from engine.task.samplers import Sampler, build_sampler
from engine.train.decay import row_rules
from engine.train.device import apply_tf32, resolve_device
from engine.train.evaluation import RunMetrics
from engine.train.gpu.cuda_graph import MAX_GRAPHS, StepGraph, cuda_recorder, unfit
from engine.train.interventions import frozen_sets
from engine.train.loop_thread import on_loop_thread
from engine.train.losses import build_loss
from engine.train.member_checkpoint import MemberCheckpoints
from engine.train.optim import (
    apply_lr,
    build_optimizer,
    lr_at,
    scheduled,
    shared_ranges,
)
from engine.train.threads import apply_threads
from engine.train.weights import OneModel, StackedModels, Weights, stack_draws, to_cpu

PROGRESS_EVERY = 10  # steps between StepsTaken events (and NaN checks)


class TrainLoop(MemberCheckpoints):
    """N members of one shape trained in lockstep; `member_events()` yields (member index, event).

    Each member sees the events, rows and summary that it would alone (same split, init, sampler draws,
    c and probes), up to float rounding where its weights are stacked. A member ends on its own (NaN,
    divergence, early stop) with its RunFinished; the others train on.
    """

    def __init__(self, cfgs: list[RunConfig], *, stacked: bool = False) -> None:
        self.cfgs = cfgs
        c0 = cfgs[0]
        self.N = N = len(cfgs)
        self.device = dev = resolve_device(c0.train.device)
        apply_threads(c0.train.threads)  # train.threads, or auto's choice for 0 (engine/train/threads.py)
        self.tf32 = apply_tf32(c0.train.tf32, dev)
        # Subnormal floats appear as weights decay in the memorization plateau and make CPU
        # matmuls up to 10× slower; flushing them to zero keeps throughput flat (bench/).
        torch.set_flush_denormal(True)
        self.dtype = torch.float64 if c0.train.dtype == "float64" else torch.float32
        self.data: list[Dataset] = []
        models = []
        for c in cfgs:
            d = load_dataset(c.data, c.train.seed, dev)
            if c.train.add_pairs:  # a fork's added pairs (engine/task/add_pairs.py)
                from engine.task.add_pairs import with_added_pairs

                d = with_added_pairs(d, c, dev)
            self.data.append(d)
            torch.manual_seed(c.train.seed)  # each member's init is the one its single run has
            models.append(build_model(c).to(device=dev, dtype=self.dtype))
        if len({len(d.x_train) for d in self.data}) > 1 or len({len(d.x_test) for d in self.data}) > 1:
            raise ValueError("train_many: members' train or test sets differ in size")
        self.weights: Weights = StackedModels(models) if stacked else OneModel(models[0], c0)
        # Equal settings step as one optimizer: the step's host cost grows with the settings, not with N.
        self.ranges = shared_ranges(cfgs) if stacked else [(0, 1)]
        self.opt_modules = [self.weights.optimized(a, b) for a, b in self.ranges]
        self.opts = [build_optimizer(m, cfgs[a]) for m, (a, _) in zip(self.opt_modules, self.ranges, strict=True)]
        self.opt_of = [k for k, (a, b) in enumerate(self.ranges) for _ in range(a, b)]  # member -> its optimizer
        self.loss_fn = build_loss(c0.train.loss)
        self.samplers: list[Sampler] = [build_sampler(c, d.x_train, dev) for c, d in zip(cfgs, self.data, strict=True)]
        self.steps_per_epoch = self.samplers[0].steps_per_epoch  # member 0's; a weighted epoch's is each one's
        self.xs_train, self.ys_train, self.xs_test, self.ys_test = (
            torch.stack([getattr(d, k) for d in self.data]) for k in ("x_train", "y_train", "x_test", "y_test")
        )  # (N, n, L) and (N, n)
        n = self.xs_train.shape[1]
        self._flat_x, self._flat_y = self.xs_train.reshape(N * n, -1), self.ys_train.reshape(N * n)  # (N·n, L), (N·n)
        self._offset = torch.arange(N, device=dev)[:, None] * n  # member i's examples start at row i·n
        self.counts = torch.zeros(N, c0.data.vocab_size, dtype=torch.int64, device=dev)  # steps each token was in
        self._present = torch.zeros_like(self.counts)
        self.runs = [
            RunMetrics(c, d, dev, self.counts[i]) for i, (c, d) in enumerate(zip(cfgs, self.data, strict=True))
        ]
        for run, sampler in zip(self.runs, self.samplers, strict=True):  # draw counts into summary.json
            run.sampler = sampler
        self._stop: str | None = None
        self._pause = threading.Event()
        self.probe_sets = [
            ProbeSet(self.weights.context(i, c, d, self.loss_fn, lambda: self._stop is not None))
            for i, (c, d) in enumerate(zip(cfgs, self.data, strict=True))
        ]
        if stacked:  # one batched SVD per matrix, one batched DFT, for every member (engine/probes/spectra.py)
            share_spectra([p for ps in self.probe_sets for p in ps.probes if isinstance(p, RankProbe)])
            share_fourier([p for ps in self.probe_sets for p in ps.probes if isinstance(p, FourierProbe)])
            share_grads([p for ps in self.probe_sets for p in ps.probes if isinstance(p, GradProbe)])
        self.columns = BASE_COLUMNS + tuple(self.probe_sets[0].columns())
        for c in cfgs:
            if c.train.patience and c.train.stop_metric not in self.columns:
                raise ConfigError(
                    f"train.stop_metric: {c.train.stop_metric!r} is not logged by this run "
                    f"(its columns: {', '.join(self.columns[3:])})"
                )
        self.status: list[str | None] = [None] * N  # set when a member ends
        self.ended_step = [0] * N
        self._final: dict[int, dict[str, Any]] = {}  # checkpoints of members that ended while others train on
        # CUDA graphs of the step where it can be recorded (engine/train/gpu/cuda_graph.py): the reason where not
        self.graph_off = unfit(self)
        self.freezers = frozen_sets(self)  # train.frozen / train.trainable (engine/train/interventions.py)
        if self.freezers:
            self.graph_off = self.graph_off or "frozen parameters (train.frozen, train.trainable)"
        self.row_rules = row_rules(self)  # optim.decay_sets, optim.lazy_rows (engine/train/decay.py)
        if self.row_rules:
            self.graph_off = self.graph_off or "decay sets or lazy rows (optim.decay_sets, optim.lazy_rows)"
        self.graphs: dict[tuple[int, ...], StepGraph] = {}
        self.recorder = cuda_recorder
        self.step = 0
        self._mask: torch.Tensor | None = None  # this step's (N, B) own rows where a member's batch is short
        self._lengths: list[int] | None = None
        self.wall_offset = 0.0
        self._t0 = 0.0

    # --- control, callable from any thread -----------------------------------------------------

    def stop(self, status: str = Status.INTERRUPTED) -> None:
        """End every member at the next step with this status (interrupted, or finished for `s`)."""
        self._stop = status

    @property
    def epoch(self) -> int:
        return self.epoch_of(0)

    def epoch_of(self, i: int) -> int:
        """Member i's epoch: a weighted epoch's length is the member's own (its sampler's)."""
        return self.step // self.samplers[i].steps_per_epoch

    def wall_s(self) -> float:
        """Training seconds so far (paused time excluded), carried across a resume."""
        return self.wall_offset + (time.perf_counter() - self._t0 if self._t0 else 0.0)

    # --- the loop ----------------------------------------------------------------------------

    def started(self, i: int) -> RunStarted:
        c, d = self.cfgs[i], self.data[i]
        return RunStarted(
            config=c,
            device=str(self.device),
            n_train=len(d.x_train),
            n_test=len(d.x_test),
            vocab_size=c.data.vocab_size,
            token_freq=d.token_freq,
            step=self.step,
            max_steps=c.train.max_steps,
            columns=self.columns,
            tokens=self.runs[i].tokens,
        )

    def member_events(self) -> Generator[tuple[int, Event], None, None]:
        """The members' event streams, interleaved, run on their own thread (`on_loop_thread`)."""
        return on_loop_thread(self._loop, self._request_stop)

    def _request_stop(self) -> None:
        self._stop = self._stop or Status.INTERRUPTED

    def _running(self) -> list[int]:
        return [i for i, s in enumerate(self.status) if s is None]

    def _loop(self) -> Iterator[tuple[int, Event]]:
        for i in range(self.N):
            yield i, self.started(i)
        self._t0 = time.perf_counter()
        self._mark = (self._t0, self.step)  # (time, step) the steps/s of StepsTaken is measured from
        self._prepare_step()
        for f in self.freezers:  # the frozen entries' values as the run (or its checkpoint) has them now
            f.snapshot()
        losses: torch.Tensor | None = None
        if self.step == 0:
            yield from self._evaluate()
        while self.step < self.cfgs[0].train.max_steps and None in self.status and self._stop is None:
            if self._pause.is_set():
                yield from self._wait_paused()
                self._mark = (time.perf_counter(), self.step)
                continue
            losses = self._take_step()
            yield from self._after_step(losses)
        # No extra evaluation where a run stops between evaluations: it would feed the phases and
        # the probes' cadence, and the checkpoint taken there would then resume along a different
        # path than an uninterrupted run (resume is bit-for-bit; summary.json has the exact step).
        for i in self._running():
            yield self._end(i, self._stop or Status.FINISHED, losses)

    def _prepare_step(self) -> None:
        """What every step of this loop does beside the arithmetic, decided once."""
        c0 = self.cfgs[0]
        self._lr_scheduled = scheduled(c0)  # warm-up or cosine (engine/train/optim.py); else the lr is never touched
        self._e_name = self.weights.e_names[0] if self.weights.e_names else ""
        self._wants_grad = [s.wants_grad for s in self.samplers]
        self._observing = bool(self._e_name) and (any(self._wants_grad) or any(p.steps for p in self.probe_sets))

    def _observe_step(self, x: torch.Tensor) -> None:
        self._observe(x, self._e_name, self._wants_grad)

    def _set_lr(self) -> None:
        for opt, (a, _) in zip(self.opts, self.ranges, strict=True):  # equal settings, equal lr
            apply_lr(opt, lr_at(self.cfgs[a], self.step), self.runs[a].lr_ratio)

    def _before_update(self, x: torch.Tensor) -> None:
        """The eager step's host side, between backward and the update (none of it changes either)."""
        if self.cfgs[0].optim.adaptive and self.step == 0:
            self._adapt(x)  # c from the first step on, not lr_ratio until step adaptive_every
        for hook in self.weights.grad_hooks:
            hook()
        if self._observing:
            self._observe_step(x)
        if self._lr_scheduled:
            self._set_lr()

    def _take_step(self) -> torch.Tensor:
        """One training step of every member: draw, forward, backward, update; the losses (N,)."""
        o = self.cfgs[0].optim
        # each member's own (B,) example indices as (N, B) rows of the flat sets; a member's shorter batch
        # (the end of its own weighted epoch) padded and masked out of its loss, in an eager step
        idx, self._mask, self._lengths = stack_draws([s.next() for s in self.samplers])
        idx = idx + self._offset
        graph = None if self._mask is not None else self._graph_for(idx, self._observing)
        if graph is not None:  # the whole step in one or two launches (engine/train/gpu/cuda_graph.py)
            # The host side that the recording reads from device tensors: c and the lr are written
            # into the optimizers' lr tensors before the replay (engine/train/optim.py `tensor_lrs`).
            if o.adaptive and self.step == 0:
                self._adapt(self._flat_x[idx])  # c from the first batch, before the first update
            if self._lr_scheduled:
                self._set_lr()
            # The sampler and the per-step probes see the step's gradients before the update, as in
            # the eager step (engine/probes/__init__.py `on_step`): between the recording's halves.
            losses, _ = graph.replay(idx, self._observe_step if self._observing else None)
        else:
            losses, x = self.update(idx, self._before_update, self._mask)
            self.count_tokens(x)  # a pad repeats its member's first row: the tokens present are the same
        self.step += 1
        if o.adaptive and self.step % o.adaptive_every == 0:
            self._adapt()
        return losses

    def _after_step(self, losses: torch.Tensor) -> Iterator[tuple[int, Event]]:
        """The step's NaN check, evaluation, phase ends and progress, in the order a checkpoint needs."""
        t, step = self.cfgs[0].train, self.step
        progress = step % PROGRESS_EVERY == 0
        if progress:
            for i, ok in enumerate(torch.isfinite(losses.detach()).tolist()):
                if self.status[i] is None and not ok:
                    yield self._end(i, Status.DIVERGED)
        stopping: list[int] = []
        if step % t.eval_every == 0 or step == t.max_steps:
            yield from self._evaluate()
            stopping = yield from self._phase_ends()
        # StepsTaken comes after the step's evaluation rows: a checkpoint taken on it (engine/train/run.py)
        # then never holds a step whose rows a kill could still lose, which resume would not redo.
        if progress:
            yield from self._steps_taken(step)
        for i in stopping:
            yield self._end(i, Status.FINISHED, losses)

    def _phase_ends(self) -> Generator[tuple[int, Event], None, list[int]]:
        """Members the evaluation found diverged end now; those whose stop rule fired are returned."""
        stopping: list[int] = []
        for i in self._running():
            ph = self.runs[i].phases
            if ph.diverged:
                yield self._end(i, Status.DIVERGED)
            elif ph.should_stop:
                stopping.append(i)
        return stopping

    def _steps_taken(self, step: int) -> Iterator[tuple[int, Event]]:
        now = time.perf_counter()
        mark_t, mark_step = self._mark
        sps = (step - mark_step) / max(now - mark_t, 1e-9)
        for i in self._running():
            yield i, StepsTaken(step, self.epoch_of(i), self.wall_s(), sps)
        if now - mark_t > 2.0:
            self._mark = (now, step)

    def update(
        self,
        idx: torch.Tensor,
        before_update: Callable[[torch.Tensor], None] | None = None,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One step's arithmetic on the rows idx (N, B): `gradients`, then `before_update(x)` (the eager
        step's host side), then `apply` (the optimizers' update). The eager step runs this; a recorded one
        (engine/train/gpu/cuda_graph.py) records the two halves. Returns the losses (N,) and the batch (N, B, L)."""
        losses, x = self.gradients(idx, mask)
        if before_update is not None:
            before_update(x)
        self.apply(x)
        return losses, x

    def gradients(self, idx: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Forward and backward on the rows idx (N, B), `mask` each member's own: the step's gradients; the
        losses (N,), the batch."""
        self.weights.zero_grad()  # set_to_none: backward writes the gradients (inside a recording, too)
        x, y = self._flat_x[idx], self._flat_y[idx]  # (N, B, L), (N, B)
        losses = self.weights.losses(x, y, self.loss_fn, mask)
        # Σ L_j: members are independent, ∂(Σ L_j)/∂θ_i = ∂L_i/∂θ_i. A scalar's backward, not
        # backward(ones): autograd checks a given gradient's shape with torch.fx's symbolic shapes,
        # whose first import (sympy) costs about 0.3 CPU-s of the first step; sum's backward is ones.
        losses.sum().backward()
        return losses, x

    def apply(self, x: torch.Tensor | None = None) -> None:
        """The optimizers' update from the gradients that `gradients` wrote, on the batch x (N, B, L)."""
        self.weights.hand_grads()
        if self.row_rules:
            assert x is not None, "decay sets and lazy rows need the batch (an eager step)"
            for members, rules in self.row_rules:
                rules.before_step(x[members])
        for opt in self.opts:
            opt.step()
        for _, rules in self.row_rules:
            rules.after_step()
        for f in self.freezers:  # the update undone on frozen entries: bit-identical under decay and moments
            f.restore()

    def _observe(self, x: torch.Tensor, e_name: str, wants_grad: list[bool]) -> None:
        """The step's ∇E to the gradient sampler and the per-step probes, member by member."""
        for i in range(self.N):
            g = self.weights.grad(e_name, i)
            if g is None:
                continue
            xi = x[i] if self._lengths is None else x[i][: self._lengths[i]]  # without its pads
            if wants_grad[i]:
                self.samplers[i].observe(xi, g)
            self.probe_sets[i].on_step(xi)

    def count_tokens(self, x: torch.Tensor) -> None:
        """Each member's steps-with-token count, +1 for every token in its batch x (N, B, L)."""
        self.counts += self._present.zero_().scatter_(1, x.reshape(self.N, -1), 1)

    def _graph_for(self, idx: torch.Tensor, split: bool = False) -> StepGraph | None:
        """The recorded step for this batch shape, recorded now if need be; None: the eager step.
        `split`: recorded in two halves, gradients and update, so that the host can read the gradients
        between them."""
        if self.graph_off is not None:
            return None
        shape = tuple(idx.shape)
        graph = self.graphs.get(shape)
        if graph is None and len(self.graphs) < MAX_GRAPHS:
            try:
                graph = self.graphs[shape] = StepGraph(self, idx, self.recorder, split)
            except RuntimeError as e:  # the recording refused: eager steps, the reason in summary.json
                self.graph_off = "recording failed: " + (str(e).splitlines() or [type(e).__name__])[0][:160]
                self.graphs.clear()
                self.weights.zero_grad()
                return None
        return graph

    def _end(self, i: int, status: str, losses: torch.Tensor | None = None) -> tuple[int, RunFinished]:
        """Member i ends with `status`, or `diverged` if its last training loss is not finite (the NaN
        check of the steps since the last one); its results and checkpoint stay as they are now."""
        if status != Status.DIVERGED and losses is not None and not torch.isfinite(losses[i].detach()).item():
            status = Status.DIVERGED
        self.status[i], self.ended_step[i] = status, self.step
        ph = self.runs[i].phases
        if status == Status.DIVERGED and ph.diverged_step is None:
            ph.diverged_step = self.step
        # The batch trains on: keep the member's checkpoint of this step. Its rows of the stack and of a
        # shared optimizer's state go on changing (as its own optimizer's did), and nothing reads them
        # again: `_evaluate` yields running members' rows only, and `member_state_dict` this snapshot.
        if self._running():
            self._final[i] = to_cpu(self._member_state(i))
        return i, RunFinished(status, RunSummary.written(self.member_summary(i)))

    def _wait_paused(self) -> Iterator[tuple[int, Event]]:
        paused_at = time.perf_counter()
        for i in self._running():
            yield i, StatusChanged(Status.PAUSED)
        while self._pause.is_set() and self._stop is None:
            time.sleep(0.05)
        self._t0 += time.perf_counter() - paused_at  # paused time is not training time
        for i in self._running():
            yield i, StatusChanged(Status.RUNNING)

    def _adapt(self, x: torch.Tensor | None = None) -> None:
        """Adaptive Adam-LR (Prop. 4.1) per member: f_E from its first batch x[i] at step 0, then from its
        update counts; σmax from its own weights. The new c takes effect on the embedding's lr at once."""
        for i, (c, run) in enumerate(zip(self.cfgs, self.runs, strict=True)):
            ratio = run.adapt(self.step, self.weights.template, x[i] if x is not None else None, self.weights.params(i))
            apply_lr(self.opts[self.opt_of[i]], lr_at(c, self.step), ratio)  # adaptive: a range of one

    def _evaluate(self) -> Iterator[tuple[int, Event]]:
        """Full train and test evaluation of every running member, probes that are due, the token counts:
        one forward pass over all members per chunk, one host sync."""
        w, loss = self.weights, self.loss_fn
        train, test = w.scores(self.xs_train, self.ys_train, loss), w.scores(self.xs_test, self.ys_test, loss)
        host = torch.stack([r.scores(a, b) for r, a, b in zip(self.runs, train, test, strict=True)]).tolist()
        updates = self.counts.tolist()
        wall = round(self.wall_s(), 4)
        has_e = bool(w.e_names)
        for i in self._running():
            c, run = self.cfgs[i], self.runs[i]
            lr = lr_at(c, self.step)  # the lr in force from this step on
            for ev in run.events(self.step, self.epoch_of(i), wall, host[i], lr, has_e, self.probe_sets[i], updates[i]):
                yield i, ev

    def member_summary(self, i: int, status: str | None = None) -> dict[str, Any]:
        """Member i's summary.json fields; `status` (a failure's) overrides the member's own."""
        status, steps = status or self.status[i] or Status.RUNNING, self.ended_step[i] or self.step
        out = self.runs[i].summary(status, steps, self.wall_s(), str(self.device))
        if self.device.type == "cuda":
            out["cuda_graph"] = "on" if self.graphs else self.graph_off or "not yet"
        if self.device.type == "cuda" or self.cfgs[i].train.tf32:
            out["tf32"] = self.tf32
        return {**out, "batched": self.N} if self.weights.batched else out
