"""train.tf32: validated, a no-op with a note on the CPU (TF32 is a CUDA tensor-core format)."""

from __future__ import annotations

import pytest
import torch

from engine.config import ConfigError
from engine.events import EvalLogged, RunFinished
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def test_tf32_needs_float32() -> None:
    with pytest.raises(ConfigError, match=r"train\.tf32: .*train\.dtype = float32"):
        tiny_config(train__tf32=True, train__dtype="float64")


def test_tf32_on_the_cpu_changes_nothing_and_says_so() -> None:
    before = torch.get_float32_matmul_precision()
    runs = []
    for on in (False, True):
        events = list(Trainer(tiny_config(train__tf32=on)))
        rows = [{k: v for k, v in e.row.items() if k != "wall_s"} for e in events if isinstance(e, EvalLogged)]
        summary = next(e.summary.doc() for e in events if isinstance(e, RunFinished))
        runs.append((str(rows), summary.get("tf32")))
    assert runs[0][0] == runs[1][0]  # the same trajectory, bit for bit
    assert runs[0][1] is None  # a CPU run without the flag: no tf32 key
    tf32 = runs[1][1]
    assert isinstance(tf32, str) and tf32.startswith("off: TF32 is a CUDA tensor-core format")
    assert torch.get_float32_matmul_precision() == before
