"""The MLP knobs of issue 17: the one-hot MLP, bias-free layers, and the first layer picked by FLOP count."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import engine.models as M
import engine.models.mlp as mlp
from engine.config import RunConfig
from engine.events import EvalLogged
from engine.models.first_layer import gathered_first_layer, onehot_first_layer, tables_pay
from engine.task import data as D
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def _all_tokens(cfg: RunConfig) -> torch.Tensor:
    return torch.as_tensor(D.tokens(cfg.data, D.operand_pairs(cfg.data)))


def _mlp_embed(cfg: RunConfig) -> mlp.MLPEmbed:
    """`build_model` for an mlp_embed config, typed as the class the tests reach into."""
    model = M.build_model(cfg)
    assert isinstance(model, mlp.MLPEmbed)
    return model


def _grad(p: torch.Tensor) -> torch.Tensor:
    assert p.grad is not None
    return p.grad


@pytest.mark.parametrize("fmt", ["a_op_b_eq", "a_b_eq", "a_b"])
def test_onehot_equals_frozen_identity_embedding(fmt: str) -> None:
    """mlp_onehot is eq. 2 with E = I frozen: same weights give the same logits and the same ∂W."""
    one = tiny_config(model__kind="mlp_onehot", model__d_hidden=24, model__n_hidden=2, data__format=fmt)
    V = one.data.vocab_size
    emb = tiny_config(
        model__d_embed=V, model__d_hidden=24, model__n_hidden=2, model__freeze_embedding=True, data__format=fmt
    )
    torch.manual_seed(0)
    m1 = M.build_model(one).double()
    assert isinstance(m1, mlp.MLPOneHot)
    m2 = _mlp_embed(emb).double()
    with torch.no_grad():
        m2.embedding.weight.copy_(torch.eye(V, dtype=torch.float64))
    missing = m2.load_state_dict(m1.state_dict(), strict=False)
    assert missing.missing_keys == ["embedding.weight"] and not missing.unexpected_keys
    assert not m2.embedding.weight.requires_grad
    x = _all_tokens(one)
    torch.testing.assert_close(m1(x), m2(x), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(m1(x), m2.forward_train(x), rtol=1e-12, atol=1e-12)
    g1 = torch.autograd.grad(m1(x).square().sum(), m1.first_layer.weight)[0]
    g2 = torch.autograd.grad(m2.forward_train(x).square().sum(), m2.first_layer.weight)[0]
    torch.testing.assert_close(g1, g2, rtol=1e-12, atol=1e-12)


def test_onehot_first_layer_equals_dense_onehot_matmul_to_second_order() -> None:
    """The gathered columns equal Linear(one_hot(x)) in value, gradient and Hessian-vector product."""
    g = torch.Generator().manual_seed(1)
    V, L, H, B = 7, 3, 10, 20
    x = torch.randint(0, V, (B, L), generator=g)
    W = torch.randn(H, L * V, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(H, generator=g, dtype=torch.float64, requires_grad=True)
    v = torch.randn(H, L * V, generator=g, dtype=torch.float64)
    dense_in = F.one_hot(x, V).flatten(1).double()  # (B, L) -> (B, L, V) -> (B, L·V)

    def hvp(h: torch.Tensor) -> tuple[torch.Tensor, ...]:
        loss = torch.tanh(h).pow(3).sum()  # curved in h, so the Hessian on W is not zero
        (gw,) = torch.autograd.grad(loss, W, create_graph=True)
        return h, gw, torch.autograd.grad((gw * v).sum(), W)[0]

    for got, want in zip(hvp(onehot_first_layer(x, W, b, V)), hvp(F.linear(dense_in, W, b)), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_onehot_exposes_w_to_the_probes() -> None:
    """W is `first_layer.weight`, there is no E, and the W probes (Hessian, rank, norms, updates) report."""
    cfg = tiny_config(
        model__kind="mlp_onehot",
        probe__hessian_every=20,
        probe__rank_every=20,
        probe__norm_every=20,
        probe__update_every=20,
    )
    tr = Trainer(cfg)
    assert M.embedding_names(tr.model) == [] and M.w_names(tr.model) == ["first_layer.weight"]
    assert tr.model.get_parameter("first_layer.weight").shape == (
        4 * 8,
        4 * 13,
    )  # (L·d, L·V): hidden 4d, one column per position and token
    rows = [ev.row for ev in tr if isinstance(ev, EvalLogged)]
    w_cols = [c for c in rows[-1] if "W" in c and "E" not in c]
    assert w_cols, rows[-1].keys()
    for c in w_cols:
        assert rows[-1][c] == rows[-1][c], c  # measured, not NaN


@pytest.mark.parametrize("kind", ["mlp_embed", "mlp_raw", "mlp_onehot"])
def test_bias_false_removes_every_bias(kind: str) -> None:
    cfg = tiny_config(model__kind=kind, model__n_hidden=2, model__bias=False)
    model = M.build_model(cfg)
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 3 and all(m.bias is None for m in linears)
    assert not [n for n, _ in model.named_parameters() if n.endswith("bias")]
    with_bias = M.build_model(tiny_config(model__kind=kind, model__n_hidden=2))
    assert all(m.bias is not None for m in with_bias.modules() if isinstance(m, torch.nn.Linear))
    x = _all_tokens(cfg)
    model(x).sum().backward()  # eval-path and train-path forwards both run without a bias
    if kind == "mlp_embed":
        assert isinstance(model, mlp.MLPEmbed)
        torch.testing.assert_close(model.forward_train(x), model(x), rtol=1e-5, atol=1e-5)


def test_first_layer_is_picked_by_flop_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables when B > V (6·L·V·d·H < 6·B·L·d·H), the plain Linear otherwise; the same numbers either way."""
    assert tables_pay(512, 99) and not tables_pay(64, 99) and not tables_pay(99, 99)
    assert not tables_pay(512, 99, "cuda") and not tables_pay(512, 99, "mps")  # a CPU rule (first_layer.py)
    cfg = tiny_config(model__d_hidden=24)  # V = 13
    torch.manual_seed(0)
    model = _mlp_embed(cfg).double()
    x = _all_tokens(cfg)  # 121 pairs
    calls: list[int] = []

    def spy(x: torch.Tensor, E: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
        calls.append(len(x))
        return gathered_first_layer(x, E, W, b)

    monkeypatch.setattr(mlp, "gathered_first_layer", spy)
    grads = []
    for batch in (x[:8], x[:100]):  # 8 < V = 13 < 100
        model.zero_grad()
        out = model.forward_train(batch)
        out.square().sum().backward()
        torch.testing.assert_close(out, model(batch), rtol=1e-12, atol=1e-12)
        grads.append([_grad(p).clone() for p in model.parameters()])
    assert calls == [100]
    # the small batch through the tables gives the plain path's gradients up to rounding
    model.zero_grad()
    h = gathered_first_layer(x[:8], model.embedding.weight, model.first_layer.weight, model.first_layer.bias)
    model._head(h).square().sum().backward()
    for p, g in zip(model.parameters(), grads[0], strict=True):
        torch.testing.assert_close(p.grad, g, rtol=1e-10, atol=1e-12)
