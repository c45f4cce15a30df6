"""A run's memory, estimated before anything is allocated, so a config that cannot fit is refused up front.

Without it `data.p = 20011` spent 31 s building 4·10^8 pairs before a MemoryError, and
`model.d_embed = 100000` asked torch for a 4·10^5 × 4·10^5 first layer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from engine.config import ConfigError, RunConfig

# Bytes per pair while the split is built (engine/task/data.py): the (a, b) operands, the token
# sequence and the label for all p^2 pairs as int64, then the training and test tensors again.
PAIR_WORDS = 2 + 1  # operands + label, on top of seq_len tokens; counted twice (all pairs, then the split)
# Each parameter lives as the weight, its gradient and Adam's two moments, plus one spare copy
# (gradient filters, probe snapshots).
PARAM_COPIES = 5


@dataclass(frozen=True)
class Footprint:
    """Estimated bytes of a run: the data set (host, then device) and the model with its optimizer."""

    pairs: int
    data_bytes: int
    params: int
    model_bytes: int

    @property
    def total(self) -> int:
        return self.data_bytes + self.model_bytes


def meta_model(cfg: RunConfig) -> Any:
    """The model `cfg` builds, on torch's meta device: shapes only, nothing allocated, no random draw.

    The random fills of the init are skipped: a meta tensor has no values, and on the meta device
    torch runs them through Python decompositions whose first call imports torch._dynamo (about
    1.3 CPU-seconds; engine/train/eager.py).
    """
    import torch
    from torch.overrides import TorchFunctionMode

    from engine.models import build_model

    class SkipFills(TorchFunctionMode):
        """nn.init's functions return their tensor untouched (they dispatch here before filling)."""

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if getattr(func, "__module__", None) == "torch.nn.init":
                return kwargs["tensor"] if "tensor" in kwargs else args[0]
            return func(*args, **kwargs)

    with torch.random.fork_rng(devices=[]), torch.device("meta"), SkipFills():
        return build_model(cfg)


def parameter_count(cfg: RunConfig) -> int:
    """Parameters of the model `cfg` builds, counted on torch's meta device (nothing allocated)."""
    return sum(p.numel() for p in meta_model(cfg).parameters())


def estimate(cfg: RunConfig) -> Footprint:
    pairs = cfg.data.p**2
    data_bytes = 2 * pairs * 8 * (cfg.data.seq_len + PAIR_WORDS)
    params = parameter_count(cfg)
    width = 8 if cfg.train.dtype == "float64" else 4
    return Footprint(pairs, data_bytes, params, params * width * PARAM_COPIES)


def host_memory() -> int:
    """Physical memory of this machine in bytes (0 when the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def check_fits(cfg: RunConfig, device: str = "cpu", device_memory: int = 0) -> Footprint:
    """Raise ConfigError naming the estimate when the run cannot fit in this machine's memory.

    `device_memory` is the accelerator's total memory for a non-CPU device (0: not checked).
    """
    fp = estimate(cfg)
    host = host_memory()
    on_host = fp.total if device == "cpu" else fp.data_bytes
    keys = f"data.p={cfg.data.p}, model.d_embed={cfg.model.d_embed}, model.d_hidden={cfg.model.d_hidden}"
    what = f"{fp.pairs:,} pairs and {fp.params:,} parameters"
    if host and on_host > host:
        raise ConfigError(
            f"{keys}: needs about {gib(on_host)} of memory ({what}), more than this machine's {gib(host)}"
        )
    if device != "cpu" and device_memory and fp.total > device_memory:
        raise ConfigError(
            f"{keys}: needs about {gib(fp.total)} on {device} ({what}), more than its {gib(device_memory)}"
        )
    return fp


def check_run(cfg: RunConfig) -> Footprint:
    """`check_fits` for the device the run will use: an accelerator's own memory, else the host's."""
    import torch

    name = cfg.train.device
    if torch.cuda.is_available() and (name in ("auto", "cuda") or name.startswith("cuda:")):
        index = int(name.removeprefix("cuda:")) if name.startswith("cuda:") else 0
        if index < torch.cuda.device_count():
            return check_fits(cfg, f"cuda:{index}", torch.cuda.get_device_properties(index).total_memory)
    return check_fits(cfg)  # the CPU, or MPS (which shares the host's memory)
