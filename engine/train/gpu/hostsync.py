"""Host reads in the training step: the calls that make a GPU run wait for the device.

A CUDA step is queued, not run: the host returns from each kernel launch at once and runs ahead. A
call that needs a device value on the host (`.item()`, `.tolist()`, `bool(t)`, `.cpu()`) or an output
size that depends on device data (`bincount`, `nonzero`, `unique`) waits until every kernel queued
before it has run, and the queue drains. `HostReads` counts such calls by name while `active()` holds.
It sees calls, not devices, so it works on the CPU too: there it names the calls that would wait on
a GPU (tests/engine/test_host_syncs.py). On a GPU,
`torch.cuda.set_sync_debug_mode("warn")` reports the syncs themselves.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from torch.overrides import TorchFunctionMode

HOST_READS = frozenset(
    {
        "item",
        "tolist",
        "cpu",
        "numpy",
        "__bool__",
        "__float__",
        "__int__",
        "__index__",
        "bincount",
        "nonzero",
        "unique",
        "masked_select",
        "repeat_interleave",
    }
)


class HostReads(TorchFunctionMode):
    """Counts the torch calls in HOST_READS made on this thread while `active()` is true."""

    def __init__(self, active: Callable[[], bool] = lambda: True) -> None:
        super().__init__()
        self.active = active
        self.counts: Counter[str] = Counter()

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = getattr(func, "__name__", "")
        if name in HOST_READS and self.active():
            self.counts[name] += 1
        return func(*args, **(kwargs or {}))
