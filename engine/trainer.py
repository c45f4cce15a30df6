"""The training loop: `Trainer(cfg)` is an iterator of events with pause, unpause and stop."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import torch

from engine.columns import BASE_COLUMNS
from engine.config import RunConfig
from engine.dataset import load_dataset
from engine.evaluation import EVAL_CHUNK, RunMetrics, evaluate
from engine.events import Event, RunFinished, RunStarted, StatusChanged, StepsTaken
from engine.gradfilters import build_grad_hooks
from engine.losses import build_loss
from engine.models import build_model, embedding_names
from engine.optim import apply_lr, build_optimizer, lr_at, scheduled, set_lr_ratio
from engine.phases import PhaseTracker
from engine.probes import ProbeSet
from engine.probes.base import ProbeContext
from engine.samplers import build_sampler
from engine.threads import apply_threads

PROGRESS_EVERY = 10  # steps between StepsTaken events (and NaN checks)


def resolve_device(name: str) -> torch.device:
    """auto = cuda, then mps, then cpu."""
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"train.device: {name} requested but CUDA is not available")
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError("train.device: mps requested but MPS is not available")
    return dev


class Trainer:
    """Builds data, model and optimizer from a RunConfig and yields events as it trains.

    The loop keeps tensors on the device and syncs with the host only every PROGRESS_EVERY steps
    and at evaluations.
    """

    def __init__(self, cfg: RunConfig, state: dict[str, Any] | None = None) -> None:
        self.cfg = cfg
        self.device = resolve_device(cfg.train.device)
        apply_threads(cfg.train.threads)  # train.threads, or auto's choice for 0 (engine/threads.py)
        # Subnormal floats appear as weights decay in the memorization plateau and make CPU
        # matmuls up to 10× slower; flushing them to zero keeps throughput flat (bench/).
        torch.set_flush_denormal(True)
        self.dtype = torch.float64 if cfg.train.dtype == "float64" else torch.float32

        dev = self.device
        self.data = data = load_dataset(cfg.data, cfg.train.seed, dev)
        self.token_freq = data.token_freq
        self.x_train, self.y_train, self.x_test, self.y_test = data.x_train, data.y_train, data.x_test, data.y_test

        torch.manual_seed(cfg.train.seed)
        self.model = build_model(cfg).to(device=dev, dtype=self.dtype)
        self.opt = build_optimizer(self.model, cfg)
        self.loss_fn = build_loss(cfg.train.loss)
        self.sampler = build_sampler(cfg, self.x_train, dev)
        self.grad_hooks = build_grad_hooks(cfg, self.model)
        e = embedding_names(self.model)
        self.E = dict(self.model.named_parameters())[e[0]] if e else None

        ctx = ProbeContext.of_model(
            cfg, self.model, self.loss_fn, self.x_train, self.y_train, lambda: self.stop_requested
        )
        self.probes = ProbeSet(ctx)
        self.columns = BASE_COLUMNS + tuple(self.probes.columns())

        self.metrics = RunMetrics(cfg, data, dev)
        self.metrics.sampler = self.sampler  # its draw counts go into summary.json
        self.updates = self.metrics.updates
        self._present = torch.zeros(cfg.data.vocab_size, dtype=torch.int64, device=dev)
        self.step = 0
        self.wall_offset = 0.0
        self._pause = threading.Event()
        self._stop: str | None = None
        self._t0 = 0.0
        if state is not None:
            self.load_state_dict(state)

    # --- control, callable from any thread -----------------------------------------------------

    def pause(self) -> None:
        """Hold the loop before its next step (StatusChanged("paused"))."""
        self._pause.set()

    def unpause(self) -> None:
        """Let a paused loop go on (StatusChanged("running"))."""
        self._pause.clear()

    @property
    def paused(self) -> bool:
        return self._pause.is_set()

    @property
    def phases(self) -> PhaseTracker:
        return self.metrics.phases

    @property
    def lr_ratio(self) -> float:
        """c = lr_E / lr now (fixed, or adaptive: Prop. 4.1)."""
        return self.metrics.lr_ratio

    def stop(self, status: str = "interrupted") -> None:
        """Ask the loop to end at the next step with this status (interrupted, or finished for `s`)."""
        self._stop = status

    @property
    def stop_requested(self) -> bool:
        return self._stop is not None

    # --- the loop ----------------------------------------------------------------------------

    @property
    def epoch(self) -> int:
        return self.step // self.sampler.steps_per_epoch

    def wall_s(self) -> float:
        return self.wall_offset + (time.perf_counter() - self._t0)

    def started_event(self) -> RunStarted:
        return RunStarted(
            config=self.cfg.to_dict(),
            device=str(self.device),
            n_train=len(self.x_train),
            n_test=len(self.x_test),
            vocab_size=self.cfg.data.vocab_size,
            token_freq=self.token_freq,
            step=self.step,
            max_steps=self.cfg.train.max_steps,
            columns=self.columns,
        )

    def __iter__(self) -> Iterator[Event]:
        return self.events()

    def events(self) -> Iterator[Event]:
        """The event stream. The loop runs in its own thread, in lockstep with the consumer.

        torch.set_flush_denormal only reaches the OpenMP team of a thread that sets it before its
        first parallel region; the main thread's team exists from `import torch` on, so a loop run
        on the main thread would still pay for subnormals in the memorization plateau. The loop
        thread sets it first, then hands each event over and waits until the consumer asks for the
        next one, so control calls and checkpoints see the trainer exactly as a generator would.
        """
        to_consumer: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
        to_loop: queue.Queue[str] = queue.Queue(maxsize=1)

        def work() -> None:
            torch.set_flush_denormal(True)
            try:
                for ev in self._loop():
                    to_consumer.put(("event", ev))
                    if to_loop.get() == "close":
                        break
            except BaseException as e:  # noqa: BLE001 - re-raised in the consumer's thread
                to_consumer.put(("error", e))
                return
            to_consumer.put(("done", None))

        thread = threading.Thread(target=work, name="grok-engine-loop", daemon=True)
        thread.start()
        try:
            while True:
                kind, item = to_consumer.get()
                if kind == "done":
                    return
                if kind == "error":
                    raise item
                yield item
                to_loop.put("next")
        finally:
            if thread.is_alive():
                self._stop = self._stop or "interrupted"
                try:
                    to_loop.put_nowait("close")
                except queue.Full:
                    pass
                thread.join(timeout=10)

    def _loop(self) -> Iterator[Event]:
        cfg = self.cfg
        t = cfg.train
        yield self.started_event()
        self._t0 = time.perf_counter()
        mark_t, mark_step = self._t0, self.step
        status = "finished"
        opt, x_tr, y_tr = self.opt, self.x_train, self.y_train
        forward = getattr(self.model, "forward_train", self.model)  # MLPEmbed: gathered first layer (first_layer.py)
        loss = None
        lr_scheduled = scheduled(cfg)  # warm-up or cosine (engine/optim.py); else the lr is never touched
        if self.step == 0:
            ev = self._evaluate()
            yield from ev
        while self.step < t.max_steps:
            if self._stop is not None:
                status = self._stop
                break
            if self._pause.is_set():
                yield from self._wait_paused()
                mark_t, mark_step = time.perf_counter(), self.step
                continue
            idx = self.sampler.next()
            x, y = x_tr[idx], y_tr[idx]
            if cfg.optim.adaptive and self.step == 0:
                self._adapt_ratio(x)  # c from the first step on, not lr_ratio until step adaptive_every
            loss = self.loss_fn(forward(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            for hook in self.grad_hooks:
                hook()
            if self.E is not None and self.E.grad is not None:
                if self.sampler.wants_grad:
                    self.sampler.observe(x, self.E.grad)
                self.probes.on_step(x)
            if lr_scheduled:
                apply_lr(opt, lr_at(cfg, self.step), self.lr_ratio)
            opt.step()
            self._present.zero_().index_fill_(0, x.reshape(-1), 1)  # tokens in this batch
            self.updates += self._present
            self.step += 1
            step = self.step
            if cfg.optim.adaptive and step % cfg.optim.adaptive_every == 0:
                self._adapt_ratio()
            if step % PROGRESS_EVERY == 0 and not torch.isfinite(loss.detach()).item():
                status = "diverged"
                break
            evaluated = step % t.eval_every == 0 or step == t.max_steps
            if evaluated:
                yield from self._evaluate()
                if self.phases.diverged:
                    status = "diverged"
                    break
            # StepsTaken comes after the step's evaluation rows: a checkpoint taken on it (engine/run.py)
            # then never holds a step whose rows a kill could still lose, which resume would not redo.
            if step % PROGRESS_EVERY == 0:
                now = time.perf_counter()
                sps = (step - mark_step) / max(now - mark_t, 1e-9)
                yield StepsTaken(step, self.epoch, self.wall_s(), sps)
                if now - mark_t > 2.0:
                    mark_t, mark_step = now, step
            if evaluated and self.phases.should_stop:
                break
        if status != "diverged" and loss is not None and not torch.isfinite(loss.detach()).item():
            status = "diverged"
        # No extra evaluation where a run stops between evaluations: it would feed the phases and
        # the probes' cadence, and the checkpoint taken there would then resume along a different
        # path than an uninterrupted run (resume is bit-for-bit; summary.json has the exact step).
        if status == "diverged" and self.phases.diverged_step is None:
            self.phases.diverged_step = self.step
        yield RunFinished(status, self.summary(status))

    def _wait_paused(self) -> Iterator[Event]:
        paused_at = time.perf_counter()
        yield StatusChanged("paused")
        while self._pause.is_set() and self._stop is None:
            time.sleep(0.05)
        self._t0 += time.perf_counter() - paused_at  # paused time is not training time
        yield StatusChanged("running")

    def _adapt_ratio(self, batch: torch.Tensor | None = None) -> None:
        """Adaptive Adam-LR (Prop. 4.1): f_E from the first batch at step 0, then from the update counts."""
        set_lr_ratio(self.opt, self.cfg.optim.lr, self.metrics.adapt(self.step, self.model, batch))

    def _evaluate(self) -> Iterator[Event]:
        """Full train and test evaluation, probes that are due, and the per-token counts."""
        was_training = self.model.training
        self.model.eval()
        tr = evaluate(self.model, self.loss_fn, self.x_train, self.y_train, EVAL_CHUNK)
        te = evaluate(self.model, self.loss_fn, self.x_test, self.y_test, EVAL_CHUNK)
        scores = self.metrics.scores(tr, te).tolist()  # the one host sync of an evaluation
        self.model.train(was_training)
        lr = lr_at(self.cfg, self.step)  # the lr in force from this step on
        wall = round(self.wall_s(), 4) if self._t0 else round(self.wall_offset, 4)
        has_e, updates = self.E is not None, self.updates.tolist()
        yield from self.metrics.events(self.step, self.epoch, wall, scores, lr, has_e, self.probes, updates)

    def summary(self, status: str) -> dict[str, Any]:
        """summary.json's fields for this run ending now with `status`."""
        wall = self.wall_s() if self._t0 else self.wall_offset
        return self.metrics.summary(status, self.step, wall, str(self.device))

    # --- checkpoints ---------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything a resumed run needs to continue bit for bit (checkpoint.pt)."""
        return {
            "step": self.step,
            "wall_s": self.wall_s() if self._t0 else self.wall_offset,
            "model": self.model.state_dict(),
            "opt": self.opt.state_dict(),
            "sampler": self.sampler.state_dict(),
            **self.metrics.state_dict(),
            "probes": self.probes.state_dict(),
            "grad_hooks": [h.state_dict() for h in self.grad_hooks],  # Grokfast's EMA (engine/gradfilters.py)
            "rng": torch.get_rng_state(),
        }

    def load_state_dict(self, s: dict[str, Any]) -> None:
        self.step = s["step"]
        self.wall_offset = s["wall_s"]
        self.model.load_state_dict(s["model"])
        self.opt.load_state_dict(s["opt"])
        self.sampler.load_state_dict(s["sampler"])
        self.metrics.load_state_dict(s)
        set_lr_ratio(self.opt, self.cfg.optim.lr, self.lr_ratio)
        self.probes.load_state_dict(s["probes"])
        for hook, hs in zip(self.grad_hooks, s.get("grad_hooks", []), strict=False):  # gradient-filter state
            hook.load_state_dict(hs)
        torch.set_rng_state(s["rng"])
