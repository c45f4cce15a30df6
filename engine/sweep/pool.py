"""Running a sweep's members: each is a normal `Run` in a worker process (local pool) or a Ray task.

`Sweep(group).events()` adopts members that ended before an earlier sweep process died, then runs
the pending ones and yields their events (engine/sweep/events.py) through `engine.sweep.drain`,
recording each member's row in results.csv as it ends.
"""

from __future__ import annotations

import os
import queue as queue_mod
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from engine.config import ConfigError
from engine.events import Status
from engine.records.group_dir import Group, Member
from engine.rundir import RunLock, lock_holder
from engine.sweep.batched import plan
from engine.sweep.drain import Backend, Outcome, drain, receive_all
from engine.sweep.events import MemberEnded, SweepEvent
from engine.sweep.member import MemberSpec, prepare
from engine.sweep.task import run_members

PARENT_POLL_S = 0.5  # a pool worker checks this often that the sweep process still exists
ORPHAN_GRACE_S = 60.0  # an orphaned worker exits at the latest this long after its parent died
# Ctrl-C, `kill`, and a terminal hang-up; a hang-up or `kill -- -PGID` reaches the workers too.
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))

# --- inside a pool worker -----------------------------------------------------------------------

_QUEUE: Any = None
_STOP: Any = None
_ORPHANED = threading.Event()  # the sweep process is gone: stop the member, then exit
_BUSY = False  # a task's members are running in this process


def pool_task(specs: list[MemberSpec]) -> list[dict[str, Any]]:
    """A pool worker's task: run these members, their events going to the sweep process's queue."""
    global _BUSY
    _BUSY = True
    try:
        return run_members(specs, _worker_notify, _worker_stopped)
    finally:
        _BUSY = False


def _worker_notify(ev: SweepEvent) -> None:
    if _QUEUE is not None:
        _QUEUE.put(ev)


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
    """One worker per core."""
    return max(os.cpu_count() or 1, 1)


# --- in the sweep process ----------------------------------------------------------------------


class LocalPool:
    """The local backend: spawned worker processes, their events on one multiprocessing queue."""

    def __init__(self, specs: list[MemberSpec], workers: int) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")  # torch and fork do not mix
        batches = plan(specs, workers=workers)  # each worker may hold a batch on the card at once
        n = max(min(workers, len(batches)), 1)
        threads = max(default_workers() // n, 1)
        with _stop_signals_blocked():  # every process spawned here: the workers and the resource tracker
            self.queue, self.stop = ctx.Queue(), ctx.Event()
            self.ex = ProcessPoolExecutor(
                n, mp_context=ctx, initializer=init_worker, initargs=(threads, self.queue, self.stop)
            )
            self.tasks: dict[Future[list[dict[str, Any]]], list[MemberSpec]] = {
                self.ex.submit(pool_task, b): b for b in batches
            }
        self.pending = set(self.tasks)

    def receive(self, timeout: float) -> list[SweepEvent]:
        return receive_all(self.queue, queue_mod.Empty, timeout)

    def collect(self) -> list[tuple[Sequence[MemberSpec], Outcome]]:
        out: list[tuple[Sequence[MemberSpec], Outcome]] = []
        for f in [f for f in self.pending if f.done()]:
            self.pending.discard(f)
            if f.cancelled():
                continue  # never started: its members stay missing, --resume runs them
            try:
                out.append((self.tasks[f], f.result()))
            except Exception as e:  # noqa: BLE001 - e.g. a worker killed by the OS
                out.append((self.tasks[f], e))
        return out

    def busy(self) -> bool:
        return bool(self.pending)

    def request_stop(self) -> None:
        self.stop.set()
        for f in self.pending:
            f.cancel()

    def close(self) -> None:
        self.stop.set()
        self.ex.shutdown(wait=True, cancel_futures=True)


class Sweep:
    """Runs a group's pending members and yields SweepEvents; `stop()` ends it early (members → interrupted).

    The sweep process holds the group directory's lock while it runs, so a second `grok sweep
    --resume` of the same group gets `RunInUse` instead of training the same members twice.
    """

    def __init__(self, group: Group, *, workers: int = 0, backend: str = "local", address: str | None = None):
        self.group = group
        self.members = group.pending()
        self.workers = workers or default_workers()
        self.backend = backend
        self.address = address
        self.stopping = False

    def stop(self) -> None:
        """Stop early: running members end interrupted with a checkpoint, the others stay pending."""
        self.stopping = True

    def events(self) -> Iterator[SweepEvent]:
        """Adopt what ended unrecorded, run the rest, and yield every member's events as they come.

        Members that fork another member (engine/sweep/forks.py) start in a later round, once the
        member they fork has ended; a round runs every member that is ready then."""
        if not self.members:
            return
        tried: set[str] = set()
        with RunLock(self.group.dir):
            while not self.stopping:
                ready = [m for m in self.members if m.id not in tried and self.group.ready(m)]
                if not ready:
                    return
                tried.update(m.id for m in ready)
                yield from self._round(ready)

    def _round(self, members: list[Member]) -> Iterator[SweepEvent]:
        specs: list[MemberSpec] = []
        for m in members:
            got = prepare(self.group, m)
            if isinstance(got, MemberSpec):
                specs.append(got)
            else:  # it ended before the last sweep process died, or a fork that cannot be made
                self.group.record(got)
                yield MemberEnded(m.id, got, adopted=got.get("status") != Status.FAILED)
        if not specs or self.stopping:
            return
        wait_for_orphans(specs)
        backend = self._backend(specs)
        try:
            for ev in drain(backend, lambda: self.stopping):
                if isinstance(ev, MemberEnded):
                    self.group.record(ev.row)
                yield ev
        finally:
            backend.close()

    def _backend(self, specs: list[MemberSpec]) -> Backend:
        if self.backend == "ray":
            from engine.sweep.ray import RayBackend

            return RayBackend(specs, self.address)
        return LocalPool(specs, self.workers)


def wait_for_orphans(specs: list[MemberSpec], timeout: float = ORPHAN_GRACE_S + 5) -> None:
    """Wait until no process holds a member's run directory, e.g. a worker of a sweep process that was
    SIGKILLed, which stops its member and exits by itself (`_watch_parent`)."""
    deadline = time.monotonic() + timeout
    for s in specs:
        while (pid := lock_holder(s.run_dir)) is not None:
            if time.monotonic() > deadline:
                raise ConfigError(f"{s.run_dir} is in use by pid {pid}; is another sweep of this group running?")
            time.sleep(0.1)
