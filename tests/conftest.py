"""Shared fixtures: tiny configs that train in well under a second on the CPU."""

from __future__ import annotations

import os

import pytest
import torch

from engine.config import RunConfig, apply_overrides

# Tests train tiny models: one thread avoids OpenMP spin-waits when test processes share the cores.
os.environ.setdefault("OMP_NUM_THREADS", "1")
torch.set_num_threads(1)

TINY = {
    "data.p": 11,
    "model.d_embed": 8,
    "train.batch_size": 16,
    "train.max_steps": 60,
    "train.eval_every": 20,
    "train.device": "cpu",
    "train.checkpoint_every": 20,
}


def tiny_config(**over: object) -> RunConfig:
    sets = dict(TINY)
    sets.update({k.replace("__", "."): v for k, v in over.items()})
    return apply_overrides(RunConfig(preset="tiny"), sets)


@pytest.fixture
def tiny() -> RunConfig:
    return tiny_config()
