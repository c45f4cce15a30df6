"""The Ray backend: the same members as Ray tasks on an existing cluster (or a local instance)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from engine.config import ConfigError
from engine.sweep.pool import MemberEnded, SweepEvent, _message, run_members

if TYPE_CHECKING:
    from engine.sweep.pool import Sweep


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--backend ray needs Ray: pip install 'grok-tui[ray]'") from None
    return ray


def _ray_task(batch: list[dict[str, Any]], group_dir: str, threads: int, queue: Any, flag: Any) -> list[dict]:
    """Runs inside a Ray worker: progress goes to a Ray queue, the stop flag is an actor."""
    import torch

    torch.set_num_threads(threads)

    def notify(msg: tuple[Any, ...]) -> None:
        queue.put_nowait(msg)

    def stopped() -> bool:
        import ray

        return bool(ray.get(flag.is_set.remote()))

    return run_members(batch, group_dir, notify, stopped)


def ray_events(sweep: Sweep, specs: list[dict[str, Any]]) -> Iterator[SweepEvent]:
    """Submit one task per batch; yield progress from the queue and rows as tasks end.

    The group directory must be on a filesystem every node sees (each member writes its run
    directory there); results.csv is written by this driver either way.
    """
    ray = _import_ray()
    from ray.util.queue import Empty, Queue

    from engine.sweep.pool import batches

    if not ray.is_initialized():
        try:
            ray.init(address=sweep.address, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as e:
            raise ConfigError(f"--address {sweep.address}: cannot connect to Ray: {e}") from None

    @ray.remote(num_cpus=0)
    class StopFlag:
        def __init__(self) -> None:
            self.value = False

        def set(self) -> None:
            self.value = True

        def is_set(self) -> bool:
            return self.value

    flag = StopFlag.remote()
    queue = Queue()
    task = ray.remote(num_cpus=1, max_retries=0)(_ray_task)
    refs = {task.remote(b, str(sweep.group.dir), 1, queue, flag): b for b in batches(specs)}
    pending = list(refs)
    stopped = False
    try:
        while pending:
            if sweep.stopping and not stopped:
                stopped = True
                ray.get(flag.set.remote())
            while True:
                try:
                    yield _message(queue.get_nowait())
                except Empty:
                    break
            done, pending = ray.wait(pending, num_returns=1, timeout=0.2)
            for ref in done:
                try:
                    rows = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - a task lost with its node, or a worker crash
                    rows = [{"member": s["id"], "status": "failed", "error": repr(e)} for s in refs[ref]]
                for row in rows:
                    yield MemberEnded(row["member"], row)
        time.sleep(0.05)
        while True:
            try:
                yield _message(queue.get_nowait())
            except Empty:
                break
    finally:
        if pending:
            ray.get(flag.set.remote())
            ray.wait(pending, num_returns=len(pending), timeout=60)
        queue.shutdown()
        ray.kill(flag)
