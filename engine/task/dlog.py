"""The group axis of a modular task: operand tokens in the order on which the task is addition mod n.

On add and sub the axis is the tokens 0..p-1 themselves (n = p). On mul and div it is the discrete
logarithm: with g a primitive root mod p, the nonzero tokens in the order 1, g, g², …, g^(p-2), so a
token a = g^i sits at position i and a·b = g^(i+j) sits at i + j mod (p-1) (n = p-1). Token 0 has no
logarithm and is not on the axis: the pairs that hold a zero operand (a·0 = 0, 0/b = 0) fall outside
the circuit analysis (docs/PROBES.md, `progress`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.config import ConfigError, DataConfig
from engine.config.numbers import is_prime, primitive_root

SIGNS = {"add": 1, "sub": -1, "mul": 1, "div": -1}  # the answer's position on the axis: i + sign·j (mod n)


@dataclass(frozen=True)
class GroupAxis:
    """`order[i]` is the token at axis position i; `sign` makes the answer's position i + sign·j (mod n)."""

    order: np.ndarray  # (n,) int64 tokens
    sign: int
    p: int

    @property
    def n(self) -> int:
        return len(self.order)

    @property
    def position(self) -> np.ndarray:
        """(p,) axis position of each token 0..p-1; -1 for a token off the axis (0 on mul and div)."""
        pos = np.full(self.p, -1, dtype=np.int64)
        pos[self.order] = np.arange(self.n)
        return pos


def dlog_order(p: int) -> np.ndarray:
    """1, g, g², …, g^(p-2) mod p for the smallest primitive root g: the nonzero tokens by discrete log."""
    if not is_prime(p):
        raise ConfigError(f"data.p: the discrete-log axis needs a prime p (got {p})")
    g = primitive_root(p)
    return np.array([pow(g, k, p) for k in range(p - 1)], dtype=np.int64)


def group_axis(cfg: DataConfig) -> GroupAxis:
    """The axis on which `cfg.op` is addition (or subtraction) mod n; poly has none."""
    if cfg.op not in SIGNS:
        raise ConfigError(f"probe.progress_every: op {cfg.op!r} is not a group operation (add, sub, mul, div)")
    order = np.arange(cfg.p, dtype=np.int64) if cfg.op in ("add", "sub") else dlog_order(cfg.p)
    return GroupAxis(order, SIGNS[cfg.op], cfg.p)
