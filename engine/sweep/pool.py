"""Running a sweep's members: each is a normal `Run` in a worker process (local pool) or a Ray task."""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from engine.sweep.spec import Group, Member

NOTIFY_EVERY_S = 0.5  # a member reports its step and polls the stop flag at most this often
PARENT_POLL_S = 0.5  # a pool worker checks this often that the sweep process still exists
ORPHAN_GRACE_S = 60.0  # an orphaned worker exits at the latest this long after its parent died
# Ctrl-C, `kill`, and a terminal hang-up; a hang-up or `kill -- -PGID` reaches the workers too.
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
# engine.trainer.BASE_COLUMNS (not imported: this module stays torch-free until a member runs)
BASE_COLUMNS = {"step", "epoch", "wall_s", "train_loss", "train_acc", "val_loss", "val_acc"}
BASE_COLUMNS |= {"lr", "lr_embed", "lr_ratio", "f_E"}


@dataclass(frozen=True)
class MemberStarted:
    """A member's run directory exists and training began."""

    member: str
    run_dir: str
    max_steps: int


@dataclass(frozen=True)
class MemberProgressed:
    """A running member reached `step`."""

    member: str
    step: int


@dataclass(frozen=True)
class MemberEnded:
    """A member ended; `row` is its results.csv row (status finished, diverged, failed or interrupted)."""

    member: str
    row: dict[str, Any]


SweepEvent = MemberStarted | MemberProgressed | MemberEnded
Notify = Callable[[tuple[Any, ...]], None]


def member_spec(group: Group, m: Member) -> dict[str, Any]:
    """What crosses to a worker: plain data only. An interrupted member resumes from its checkpoint."""
    row = group.results().get(m.id, {})
    resume = ""
    if row.get("status") == "interrupted" and row.get("run_dir"):
        d = group.dir / row["run_dir"]
        if (d / "checkpoint.pt").exists():
            resume = str(d)
    return {"id": m.id, "config": group.config(m).to_dict(), "resume_dir": resume}


def run_member(spec: dict[str, Any], group_dir: str, notify: Notify | None, stop: Callable[[], bool]) -> dict[str, Any]:
    """Train one member to its end as a normal run directory inside the group; return its results row."""
    from engine.config import from_dict
    from engine.events import EvalLogged, RunStarted, StepsTaken
    from engine.run import Run

    mid = spec["id"]
    t0 = time.perf_counter()
    try:
        cfg = from_dict(spec["config"])
        run = Run.resume(spec["resume_dir"]) if spec["resume_dir"] else Run(cfg, out=group_dir)
    except Exception as e:  # noqa: BLE001 - a member that cannot start is recorded, the sweep goes on
        return {"member": mid, "status": "failed", "error": f"{type(e).__name__}: {e}", "wall_s": 0.0}
    first: dict[str, float] = {}  # probe columns: first and last finite value (probes are NaN when not due)
    last: dict[str, float] = {}
    mark = 0.0
    for ev in run.events():
        if isinstance(ev, RunStarted) and notify:
            notify(("started", mid, run.dir.name, ev.max_steps))
        elif isinstance(ev, EvalLogged):
            for k, v in ev.row.items():
                if k not in BASE_COLUMNS and isinstance(v, int | float) and math.isfinite(v):
                    first.setdefault(k, v)
                    last[k] = v
        elif isinstance(ev, StepsTaken) and time.perf_counter() - mark > NOTIFY_EVERY_S:
            mark = time.perf_counter()
            if notify:
                notify(("step", mid, ev.step))
            if stop():
                run.stop("interrupted")
    s = run.summary
    row = {k: s.get(k) for k in ("status", "steps", "memorized_step", "generalized_step", "grokking_delay")}
    row.update({k: s.get(k) for k in ("final_train_acc", "final_val_acc", "best_val_acc", "wall_s")})
    row.update(member=mid, max_steps=run.cfg.train.max_steps, run_dir=run.dir.name)
    if s.get("error"):
        row["error"] = s["error"]
    # Probe columns (Hessian λmax, ranks, Fourier share, ...): their first and last measured value.
    row.update({f"first_{k}": v for k, v in first.items()})
    row.update({f"final_{k}": v for k, v in last.items()})
    row["wall_s"] = row["wall_s"] if row["wall_s"] is not None else round(time.perf_counter() - t0, 3)
    return row


def run_members(specs: list[dict[str, Any]], group_dir: str, notify: Notify | None = None, stop=None) -> list[dict]:
    """Run a batch of members, one after another; the seam where a batched trainer can take over.

    A future `engine.train_many(configs)` (many seeds as one batched model) plugs in here: give it
    the batch when the members differ only in `train.seed`, and return one row per member.
    """
    global _BUSY
    notify = notify if notify is not None else _worker_notify
    stop = stop if stop is not None else _worker_stopped
    _BUSY = True
    try:
        return _run_members(specs, group_dir, notify, stop)
    finally:
        _BUSY = False


def _run_members(specs: list[dict[str, Any]], group_dir: str, notify: Notify, stop: Callable[[], bool]) -> list[dict]:
    if len(specs) > 1:  # members that share shapes on a GPU: one batched model (engine.sweep.batched)
        from engine.sweep.batched import batchable, run_batch

        if batchable(specs):
            return run_batch(specs, group_dir, notify, stop)
    rows = []
    for s in specs:
        if stop():
            break  # members not started stay missing; --resume runs them
        rows.append(run_member(s, group_dir, notify, stop))
    return rows


def batches(specs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Members that share shapes train as one batched model on a GPU (engine.sweep.batched); else one per task."""
    from engine.sweep.batched import plan

    return plan(specs)


# --- the local process pool ---------------------------------------------------------------------

_QUEUE: Any = None
_STOP: Any = None
_ORPHANED = threading.Event()  # the sweep process is gone: stop the member, then exit
_BUSY = False  # a batch of members is running in this process


def _worker_notify(msg: tuple[Any, ...]) -> None:
    if _QUEUE is not None:
        _QUEUE.put(msg)


def _worker_stopped() -> bool:
    return _ORPHANED.is_set() or (_STOP is not None and _STOP.is_set())


def _watch_parent(ppid: int) -> None:
    """Workers ignore the stop signals, so they must not outlive the sweep process (e.g. SIGKILLed)."""
    while os.getppid() == ppid:
        time.sleep(PARENT_POLL_S)
    _ORPHANED.set()  # the running member stops as interrupted and writes its checkpoint
    deadline = time.monotonic() + ORPHAN_GRACE_S
    while _BUSY and time.monotonic() < deadline:
        time.sleep(0.1)
    os._exit(1)  # an idle worker would wait for work from the dead parent forever


@contextmanager
def _stop_signals_blocked() -> Iterator[None]:
    """Block the stop signals while workers are spawned: they are born with them blocked (the mask
    survives exec) and unblock them once ignored, so a signal at start-up cannot kill one half-made.
    The parent's handlers get a signal that arrived meanwhile as soon as the block is lifted."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def init_worker(threads: int, queue: Any = None, stop: Any = None) -> None:
    """Worker setup: ignore the stop signals (the parent stops us through `stop`, also when a signal
    reached the whole process group), exit if the parent dies, and workers × threads = cores."""
    global _QUEUE, _STOP
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), name="parent-watch", daemon=True).start()
    _QUEUE, _STOP = queue, stop
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    import torch

    torch.set_num_threads(threads)


def default_workers() -> int:
    return max(os.cpu_count() or 1, 1)


class Sweep:
    """Runs a group's pending members and yields SweepEvents; `stop()` ends it early (members → interrupted)."""

    def __init__(self, group: Group, *, workers: int = 0, backend: str = "local", address: str | None = None):
        self.group = group
        self.members = group.pending()
        self.workers = workers or default_workers()
        self.backend = backend
        self.address = address
        self.stopping = False

    def stop(self) -> None:
        self.stopping = True

    def events(self) -> Iterator[SweepEvent]:
        specs = [member_spec(self.group, m) for m in self.members]
        if not specs:
            return
        if self.backend == "ray":
            from engine.sweep.ray import ray_events

            source = ray_events(self, specs)
        else:
            source = self._local_events(specs)
        for ev in source:
            if isinstance(ev, MemberEnded):
                self.group.record(ev.row)
            yield ev

    def _local_events(self, specs: list[dict[str, Any]]) -> Iterator[SweepEvent]:
        import multiprocessing as mp
        import queue as queue_mod

        ctx = mp.get_context("spawn")  # torch and fork do not mix
        cores = default_workers()
        workers = min(self.workers, len(specs))
        threads = max(cores // workers, 1)
        gdir = str(self.group.dir)
        with _stop_signals_blocked():  # every process spawned here: the workers and the resource tracker
            q, stop = ctx.Queue(), ctx.Event()
            ex = ProcessPoolExecutor(workers, mp_context=ctx, initializer=init_worker, initargs=(threads, q, stop))
            futs: dict[Future, list[dict[str, Any]]] = {ex.submit(run_members, b, gdir): b for b in batches(specs)}
        pending = set(futs)
        try:
            while pending:
                if self.stopping and not stop.is_set():
                    stop.set()
                    for f in pending:
                        f.cancel()
                try:
                    yield _message(q.get(timeout=0.1))
                    continue
                except queue_mod.Empty:
                    pass
                for f in [f for f in pending if f.done()]:
                    pending.discard(f)
                    if f.cancelled():
                        continue
                    try:
                        rows = f.result()
                    except Exception as e:  # noqa: BLE001 - e.g. a worker killed by the OS
                        rows = [{"member": s["id"], "status": "failed", "error": repr(e)} for s in futs[f]]
                    for row in rows:
                        yield MemberEnded(row["member"], row)
            while True:
                try:
                    yield _message(q.get_nowait())
                except queue_mod.Empty:
                    break
        finally:
            stop.set()
            ex.shutdown(wait=True, cancel_futures=True)


def _message(msg: tuple[Any, ...]) -> SweepEvent:
    if msg[0] == "started":
        return MemberStarted(msg[1], str(msg[2]), int(msg[3]))
    return MemberProgressed(msg[1], int(msg[2]))
