"""Grokfast-EMA against a hand-computed EMA, ⊥Grad's projection, and bit-for-bit resume with filter state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from engine.events import StepsTaken
from engine.models import build_model
from engine.train.gradfilters import GrokfastEMA, OrthogonalGrad, build_grad_hooks
from engine.train.run import Run
from tests.conftest import tiny_config


class OneParam(nn.Module):
    """A model whose one parameter is the vector `w`."""

    def __init__(self, values: list[float]) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor(values, dtype=torch.float64))


def one_param_model(values: list[float]) -> OneParam:
    return OneParam(values)


def test_grokfast_matches_a_hand_computed_ema() -> None:
    alpha, lamb = 0.9, 2.0
    model = one_param_model([0.0, 0.0])
    hook = GrokfastEMA(model, alpha, lamb)
    grads = [[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0]]
    # By hand: h1 = g1; h2 = 0.9 h1 + 0.1 g2; h3 = 0.9 h2 + 0.1 g3; the step sees g + 2 h.
    h1 = [1.0, -2.0]
    h2 = [0.9 * 1.0 + 0.1 * 3.0, 0.9 * -2.0 + 0.1 * 0.5]  # [1.2, -1.75]
    h3 = [0.9 * 1.2 + 0.1 * -1.0, 0.9 * -1.75 + 0.1 * 4.0]  # [0.98, -1.175]
    expected = [
        [1.0 + 2 * h1[0], -2.0 + 2 * h1[1]],
        [3.0 + 2 * h2[0], 0.5 + 2 * h2[1]],
        [-1.0 + 2 * h3[0], 4.0 + 2 * h3[1]],
    ]
    for g, want in zip(grads, expected, strict=True):
        model.w.grad = torch.tensor(g, dtype=torch.float64)
        hook()
        assert model.w.grad.tolist() == pytest.approx(want, abs=1e-12)
    assert hook.ema["w"].tolist() == pytest.approx(h3, abs=1e-12)


def test_grokfast_state_round_trips() -> None:
    model = one_param_model([0.0, 0.0])
    a = GrokfastEMA(model, 0.98, 2.0)
    model.w.grad = torch.tensor([1.0, 2.0], dtype=torch.float64)
    a()
    b = GrokfastEMA(model, 0.98, 2.0)
    b.load_state_dict(a.state_dict())
    for hook in (a, b):
        model.w.grad = torch.tensor([-3.0, 0.25], dtype=torch.float64)
        hook()
        out = model.w.grad.clone()
    model.w.grad = torch.tensor([-3.0, 0.25], dtype=torch.float64)
    fresh = GrokfastEMA(model, 0.98, 2.0)
    fresh()
    assert torch.equal(out, torch.tensor([-3.0, 0.25], dtype=torch.float64) + 2.0 * b.ema["w"])
    assert not torch.equal(out, model.w.grad)  # a fresh filter (no state) gives a different step


def test_orthogonal_grad_removes_the_parallel_component() -> None:
    torch.manual_seed(0)
    model = one_param_model(torch.randn(6).tolist())
    w = model.w.detach().clone()
    g = torch.randn(6, dtype=torch.float64) + 0.7 * w  # a gradient with a large part along w
    model.w.grad = g.clone()
    OrthogonalGrad(model)()
    out = model.w.grad
    assert float(torch.dot(out, w)) == pytest.approx(0.0, abs=1e-12)
    assert float(out.norm()) == pytest.approx(float(g.norm()))  # rescaled to ‖g‖ (the authors' code)
    perp = g - torch.dot(w, g) / torch.dot(w, w) * w
    torch.testing.assert_close(out, perp * g.norm() / perp.norm())


def test_orthogonal_grad_leaves_zero_weights_and_scalars_alone() -> None:
    m = nn.Module()
    m.zero = nn.Parameter(torch.zeros(3, dtype=torch.float64))
    m.scalar = nn.Parameter(torch.ones(1, dtype=torch.float64))
    m.zero.grad = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    m.scalar.grad = torch.tensor([5.0], dtype=torch.float64)
    OrthogonalGrad(m)()
    assert m.zero.grad.tolist() == [1.0, 2.0, 3.0] and m.scalar.grad.tolist() == [5.0]


def test_build_grad_hooks_from_config() -> None:
    model = build_model(tiny_config())
    assert build_grad_hooks(tiny_config(), model) == []
    hooks = build_grad_hooks(
        tiny_config(
            optim__grokfast_alpha=0.98, optim__grokfast_lambda=2.0, optim__orthogonal=True, optim__name="adamw"
        ),
        model,
    )
    assert [type(h) for h in hooks] == [GrokfastEMA, OrthogonalGrad]


def _metrics(d: Path) -> list[str]:
    lines = (d / "metrics.csv").read_text().splitlines()
    col = lines[0].split(",").index("wall_s")
    return [",".join(v for i, v in enumerate(line.split(",")) if i != col) for line in lines]


@pytest.mark.parametrize("kind", ["mlp_embed", "transformer"])
def test_resume_with_grokfast_and_orthogonal_is_bit_for_bit(tmp_path: Path, kind: str) -> None:
    over = dict(
        train__max_steps=60,
        optim__grokfast_alpha=0.9,
        optim__grokfast_lambda=2.0,
        optim__orthogonal=True,
        optim__name="adamw",
        train__loss="stablemax",
        model__kind=kind,
        model__n_heads=2,
        model__d_mlp=16,
    )
    full = Run(tiny_config(**over), tmp_path / "a")
    list(full.events())
    part = Run(tiny_config(**over), tmp_path / "b")
    for ev in part.events():
        if isinstance(ev, StepsTaken) and ev.step == 30:
            part.stop("interrupted")
    resumed = Run.from_checkpoint(part.dir)
    list(resumed.events())
    assert json.loads((part.dir / "summary.json").read_text())["status"] == "finished"
    b = _metrics(part.dir)
    assert _metrics(full.dir) == [b[0]] + [r for r in b[1:] if int(r.split(",")[0]) % 20 == 0]
