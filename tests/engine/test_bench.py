"""The FLOP counts `grok bench` reports follow the first layer the engine runs (engine/train/bench.py)."""

from __future__ import annotations

from engine.config import RunConfig, apply_overrides
from engine.train.bench import engine_flops, matmul_params, nominal_flops, uses_tables


def cfg(**sets: object) -> RunConfig:
    return apply_overrides(RunConfig(), {k.replace("__", "."): v for k, v in sets.items()})


def test_tables_are_counted_only_where_the_engine_builds_them() -> None:
    small, large = cfg(train__batch_size=64), cfg(train__batch_size=512)  # V = 99: plain below, tables above
    assert engine_flops(small) == nominal_flops(small)
    d, L, V, H = 128, 4, 99, 512
    first = 6.0 * L * V * d * H + 2.0 * 512 * L * H
    assert engine_flops(large) == first + 6.0 * 512 * (matmul_params(large) - L * d * H)
    assert engine_flops(large) < nominal_flops(large)
    assert (uses_tables(small), uses_tables(large)) == (False, True)  # what `grok bench` says it ran


def test_onehot_counts_its_first_layer_as_gathers() -> None:
    c = cfg(model__kind="mlp_onehot", train__batch_size=512)
    L, V, H = 4, 99, 512
    assert matmul_params(c) == L * V * H + H * 97
    assert engine_flops(c) == 2.0 * 512 * L * H + 6.0 * 512 * H * 97
