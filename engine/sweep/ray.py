"""The Ray backend: the same members as Ray tasks on an existing cluster (or a local instance).

The group directory must be on a file system every node sees (each member writes its run directory
there); results.csv is written by the sweep process either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.config import ConfigError
from engine.sweep.batched import plan
from engine.sweep.card_memory import CPU_MEMBERS
from engine.sweep.drain import Outcome, receive_all
from engine.sweep.events import SweepEvent
from engine.sweep.member import MemberSpec
from engine.sweep.task import run_members

STOP_WAIT_S = 60.0  # how long `close` waits for stopped tasks to write their last rows


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--backend ray needs Ray: pip install 'grok-tui[ray]'") from None
    return ray


def _ray_task(batch: list[MemberSpec], threads: int, queue: Any, flag: Any) -> list[dict[str, Any]]:
    """Runs inside a Ray worker: events go to a Ray queue, the stop flag is an actor."""
    import ray
    import torch

    torch.set_num_threads(threads)

    def stopped() -> bool:
        return bool(ray.get(flag.is_set.remote()))

    return run_members(batch, queue.put, stopped)  # put waits until the queue holds the event: order kept


class RayBackend:
    """One Ray task per batch of members; their events on a Ray queue, stop through a flag actor."""

    def __init__(self, specs: list[MemberSpec], address: str | None) -> None:
        ray = self.ray = _import_ray()
        from ray.util.queue import Queue

        if not ray.is_initialized():
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, ValueError, RuntimeError) as e:
                raise ConfigError(f"--address {address}: cannot connect to Ray: {e}") from None

        @ray.remote(num_cpus=0)
        class StopFlag:
            """An actor every task polls: set once, when the sweep stops."""

            def __init__(self) -> None:
                self.value = False

            def set(self) -> None:
                self.value = True

            def is_set(self) -> bool:
                return self.value

        self.flag = StopFlag.remote()  # type: ignore[attr-defined]
        self.queue = Queue()
        task = ray.remote(num_cpus=1, max_retries=0)(_ray_task)
        # Ray's tasks run on other nodes' cards, as many at once as a node has CPUs: the driver's free memory
        # sizes none of them, so a Ray batch keeps the fixed size it had before batches were sized to a card
        batches = plan(specs, max_members=CPU_MEMBERS)
        self.tasks = {task.remote(b, 1, self.queue, self.flag): b for b in batches}
        self.pending = list(self.tasks)
        self.stopped = False

    def receive(self, timeout: float) -> list[SweepEvent]:
        from ray.util.queue import Empty

        return receive_all(self.queue, Empty, timeout)

    def collect(self) -> list[tuple[Sequence[MemberSpec], Outcome]]:
        if not self.pending:
            return []
        done, self.pending = self.ray.wait(self.pending, num_returns=len(self.pending), timeout=0)
        out: list[tuple[Sequence[MemberSpec], Outcome]] = []
        for ref in done:
            try:
                out.append((self.tasks[ref], self.ray.get(ref)))
            except Exception as e:  # noqa: BLE001 - a task lost with its node, or a worker crash
                out.append((self.tasks[ref], e))
        return out

    def busy(self) -> bool:
        return bool(self.pending)

    def request_stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.ray.get(self.flag.set.remote())

    def close(self) -> None:
        if self.pending:
            self.request_stop()
            self.ray.wait(self.pending, num_returns=len(self.pending), timeout=STOP_WAIT_S)
        self.queue.shutdown()
        self.ray.kill(self.flag)
