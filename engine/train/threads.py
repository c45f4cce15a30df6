"""How many intra-op threads torch gets when `train.threads = 0` (auto), and why.

Measured on the 2-core CPU (docs/PERFORMANCE.md, "Threads"): with more torch threads than idle
cores, OpenMP's threads wait on each other at every kernel's barrier while another process holds
a core, and a run slows down many times over (a 1-step `grok run` with the Hessian probe took 34.9 s
on 2 threads against 2.6 s on 1 at load average 7; a Hessian measurement 7.3 s against 0.93 s at
load 6). So auto takes the cores that are idle now, never more than this process's share of them
(on a quiet machine that is every core, torch's old default; 1 against 2 threads on a quiet machine
was not measured):

- `OMP_NUM_THREADS` set in the environment (by you, or by `grok sweep` for its workers, which split
  the cores so that workers × threads ≤ cores): torch already follows it, auto keeps it;
- otherwise min(usable cores, idle cores), at least 1, where idle cores = usable cores minus the
  1-minute load average (rounded), which counts every other runnable process on the machine.

Auto decides once per process, so every run of a process (the TUI's, a sweep worker's) uses the same
count. A float sum split over another number of threads can round differently (a batch 64 run of the
same seed ended in the last bits apart on 1 and 2 threads), so runs that must match bit for bit across
processes (a resume on another day, the golden tests) pin `train.threads` or OMP_NUM_THREADS.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ThreadChoice:
    """The thread count and the reason, for `grok doctor` and the run's set-up."""

    threads: int
    reason: str


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, which containers and taskset narrow)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def from_env(env: dict[str, str] | None = None) -> ThreadChoice | None:
    """OMP_NUM_THREADS, when it is set to a positive count."""
    omp = (os.environ if env is None else env).get("OMP_NUM_THREADS", "").strip()
    if omp.isdigit() and int(omp) > 0:
        return ThreadChoice(int(omp), f"OMP_NUM_THREADS={omp} is set in the environment")
    return None


def by_load(cores: int, load: float | None) -> ThreadChoice:
    """min(cores, idle cores), at least 1: idle = cores minus the rounded 1-minute load average."""
    if load is None:
        return ThreadChoice(cores, f"{cores} usable cores (no load average on this system)")
    idle = max(cores - round(load), 0)
    return ThreadChoice(max(min(cores, idle), 1), f"{cores} usable cores, load average {load:.1f}: {idle} idle")


@functools.cache
def _process_choice() -> ThreadChoice:
    return by_load(usable_cores(), load_average())


def choose_threads(requested: int) -> ThreadChoice:
    """`train.threads` as set (> 0), else OMP_NUM_THREADS, else the load rule as this process first decided it."""
    if requested > 0:
        return ThreadChoice(requested, "train.threads")
    return from_env() or _process_choice()


def apply_threads(requested: int) -> ThreadChoice:
    """Set torch's intra-op threads for this process by `choose_threads`; the one call a trainer makes."""
    import torch

    choice = choose_threads(requested)
    if torch.get_num_threads() != choice.threads:
        torch.set_num_threads(choice.threads)
    return choice
