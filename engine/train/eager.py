"""torch.optim in eager mode without importing torch._dynamo, which a run that never compiles does not need.

Importing torch._dynamo costs about as much as importing torch itself (1.3 CPU-seconds on the 2-core
CPU, docs/PERFORMANCE.md, "Time to the first row"), and torch.optim pulls it in on the first call of
several methods: `add_param_group`, `zero_grad`, `state_dict` and `load_state_dict` are wrapped by
`torch._disable_dynamo`, which imports dynamo to build the real wrapper the first time; and every
`step` runs through a wrapper that imports it to place two graph breaks. Outside torch.compile all of
these do nothing but call the function, and nothing can be compiling while torch._dynamo has never
been imported, so:

- `defer_dynamo_disable` gives each such method a stand-in for the cached wrapper that calls the
  function directly while torch._dynamo is not imported, and builds and caches the real one once it is;
- `eager_step(opt)` is `opt.step` without the graph breaks: the optimizer's own `step` under
  `torch.no_grad()`, as torch's wrapper runs it when `differentiable` is off. It falls back to the
  ordinary `opt.step` once torch._dynamo is imported, for a closure, with step hooks registered,
  under the profiler (which labels the step), or when the wrapper chain is not the one this was
  written against.

The arithmetic is the optimizer's own, so trajectories are bit for bit those of `opt.step()`
(tests/engine/test_eager.py). What still imports torch._dynamo: torch.func's `grad` and `jvp` (not
used by the engine: the Hessian probe differentiates twice with plain autograd) and torch.compile.
The memory estimate on the meta device skips the init's fills for the same reason
(engine/train/footprint.py).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch._C._autograd import _profiler_enabled
from torch._compile import _disable_dynamo

DYNAMO = "torch._dynamo"
_DONE: list[bool] = []
_LAZY_CODE = _disable_dynamo(lambda: None).__code__  # the code object of every such wrapper


def dynamo_imported() -> bool:
    return DYNAMO in sys.modules


def _is_lazy_disable(f: Any) -> bool:
    """True for the wrapper `torch._disable_dynamo(fn)` returns (torch/_compile.py: `inner`)."""
    return getattr(f, "__code__", None) is _LAZY_CODE and bool(getattr(f, "__closure__", None))


def _defer(inner: Any) -> None:
    cells = dict(zip(inner.__code__.co_freevars, (c.cell_contents for c in inner.__closure__), strict=True))
    fn, recursive = cells.get("fn"), cells.get("recursive", True)
    if fn is None or getattr(fn, "__dynamo_disable", None) is not None:
        return

    def call(*args: Any, **kwargs: Any) -> Any:
        if not dynamo_imported():  # nothing can be compiling: call it as it is
            return fn(*args, **kwargs)
        real = sys.modules[DYNAMO].disable(fn, recursive, wrapping=False)  # what torch would have built
        fn.__dynamo_disable = real
        return real(*args, **kwargs)

    fn.__dynamo_disable = call


def defer_dynamo_disable() -> None:
    """Give torch.optim.Optimizer's dynamo-disabled methods the deferred wrapper (once per process)."""
    if _DONE:
        return
    for attr in vars(torch.optim.Optimizer).values():
        if _is_lazy_disable(attr):
            _defer(attr)
    _DONE.append(True)


def _raw_step(opt: torch.optim.Optimizer) -> Callable[..., Any] | None:
    """The optimizer class's own `step`, below torch's profiling and graph-break wrappers, or None."""
    raw = inspect.unwrap(type(opt).step)
    names = {f"{k.__name__}.step" for k in type(opt).__mro__}  # AdamW runs Adam's
    own = getattr(raw, "__qualname__", "") in names and raw.__module__.startswith("torch.optim.")
    return raw if own else None


def _hooked(opt: torch.optim.Optimizer) -> bool:
    from torch.optim import optimizer as o

    return bool(
        opt._optimizer_step_pre_hooks
        or opt._optimizer_step_post_hooks
        or o._global_optimizer_pre_hooks
        or o._global_optimizer_post_hooks
    )


def eager_step(opt: torch.optim.Optimizer) -> Callable[..., Any]:
    """`opt.step` without importing torch._dynamo (see the module docstring); same arithmetic."""
    ordinary = opt.step
    raw = _raw_step(opt)
    if raw is None or opt.defaults.get("differentiable"):
        return ordinary

    def step(closure: Callable[[], Any] | None = None) -> Any:
        if closure is not None or dynamo_imported() or _hooked(opt) or _profiler_enabled():
            return ordinary(closure)
        with torch.no_grad():
            return raw(opt)

    return step
