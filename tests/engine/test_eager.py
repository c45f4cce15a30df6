"""A run that never compiles leaves torch._dynamo unimported, and trains bit for bit as torch's own step does.

The run has the Hessian probe on (its HVPs are plain autograd, engine/probes/hessian.py), and neither
it nor the step imports torch.fx's symbolic shapes (sympy), which autograd pulls in to check a given
output gradient's shape: both are a second or so of a short run's start (docs/PERFORMANCE.md).

These run in a fresh interpreter: the test process may already hold torch._dynamo (another test, a
plugin), and then `eager_step` rightly falls back to the ordinary `opt.step`.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

# (optimizer, model kind): each optimizer class and each model kind at least once
CASES = [("adam", "mlp_embed"), ("adamw", "mlp_onehot"), ("sgd", "mlp_raw"), ("adam", "transformer")]

SCRIPT = """
import sys
import torch
from engine.config import RunConfig, apply_overrides
from engine.train.footprint import parameter_count
from engine.train.trainer import Trainer

torch.set_num_threads(1)
CASES = %r

def config(opt, kind):
    return apply_overrides(RunConfig(), {
        "data.p": 11, "train.max_steps": 30, "train.eval_every": 10, "train.batch_size": 16,
        "train.device": "cpu", "train.threads": 1, "optim.name": opt, "optim.weight_decay": 0.01,
        "optim.momentum": 0.9, "model.kind": kind, "probe.hessian_every": 10, "probe.hessian_iters": 3,
    })

def train(cfg):
    t = Trainer(cfg)
    rows = [{k: v for k, v in ev.row.items() if k != "wall_s"} for ev in t if type(ev).__name__ == "EvalLogged"]
    return rows, {k: v.clone() for k, v in t.model.state_dict().items()}, t.opt.state_dict()

first = {}
for case in CASES:
    cfg = config(*case)
    count = parameter_count(cfg)
    first[case] = rows, params, _ = train(cfg)
    assert "torch._dynamo" not in sys.modules, (case, "a run imported torch._dynamo")
    fx = "torch.fx.experimental.symbolic_shapes"
    assert fx not in sys.modules, (case, "a run imported torch.fx's symbolic shapes")
    assert any(r["hess_iters"] > 0 for r in rows), (case, "the Hessian probe never ran")
    assert count == sum(p.numel() for p in params.values()), (case, count, "parameter_count differs from the model")

import torch._dynamo  # now `eager_step` falls back to torch's own wrapped step

for case in CASES:
    rows, params, opt_state = first[case]
    rows2, params2, opt_state2 = train(config(*case))
    assert str(rows) == str(rows2), (case, rows, rows2)  # str: NaN cells compare equal
    for k in params:
        assert torch.equal(params[k], params2[k]), (case, k)
    for k, s in opt_state["state"].items():
        for name, v in s.items():
            assert torch.equal(v, opt_state2["state"][k][name]), (case, k, name)
print("ok")
"""


def test_runs_keep_dynamo_unimported_and_step_as_torch_does() -> None:
    """Every case in one fresh interpreter (one torch import, not four): all trained before dynamo is
    imported, then all again through torch's own step."""
    script = textwrap.dedent(SCRIPT % (CASES,))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok"


def test_eager_step_falls_back_for_a_closure_and_hooks() -> None:
    import torch

    from engine.train.eager import eager_step

    w = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.SGD([w], lr=0.1)
    step = eager_step(opt)
    calls: list[str] = []
    opt.register_step_pre_hook(lambda *a: calls.append("pre"))
    w.grad = torch.ones(3)
    step()
    assert calls == ["pre"]  # the ordinary step ran its hooks
    assert torch.allclose(w.detach(), torch.full((3,), 0.9))
    loss = step(lambda: (w**2).sum())  # a closure goes to the ordinary step too
    assert loss is not None
