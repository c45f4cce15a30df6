"""The one-layer transformer: shapes, where each LN sits (forward hooks), names of E and W."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from engine.config import LAYERNORMS, RunConfig
from engine.events import RunFinished
from engine.models import build_model, embedding_names, w_names
from engine.models.transformer import Transformer
from engine.train.adaptive import adaptive_ratio
from engine.train.optim import build_optimizer
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def tconfig(layernorm: str = "none", **over: object) -> RunConfig:
    sets: dict[str, object] = {
        "model__kind": "transformer",
        "model__d_embed": 8,
        "model__n_heads": 2,
        "model__d_mlp": 16,
    }
    sets.update(over)
    return tiny_config(model__layernorm=layernorm, **sets)


def build_transformer(cfg: RunConfig) -> Transformer:
    """`build_model` for a transformer config, typed as the class the tests reach into."""
    model = build_model(cfg)
    assert isinstance(model, Transformer)
    return model


def batch(cfg: RunConfig, n: int = 5) -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    a = torch.randint(0, cfg.data.p, (n,), generator=g)
    b = torch.randint(0, cfg.data.p, (n,), generator=g)
    return torch.stack([a, torch.full_like(a, cfg.data.p), b, torch.full_like(a, cfg.data.p + 1)], 1)


def full_sequence_logits(model: Transformer, x: torch.Tensor) -> torch.Tensor:
    """The same network written the long way: every position through every layer, then the `=` row."""
    blk, ln = model.block, model.block.layernorm

    def norm(m: nn.LayerNorm | None, t: torch.Tensor) -> torch.Tensor:
        assert m is not None, f"layernorm={ln} has no LN here"
        out: torch.Tensor = m(t)
        return out

    x0 = model.embedding(x) + model.pos_embedding
    n = norm(blk.ln_attn, x0) if ln in ("pre_attn", "pre", "qk", "v") else x0
    qk = n if ln in ("pre_attn", "pre", "qk") else x0
    v_in = n if ln in ("pre_attn", "pre", "v") else x0
    B, L, d = x0.shape
    H = blk.attn.n_heads

    def heads(t: torch.Tensor) -> torch.Tensor:
        return t.view(B, L, H, d // H).transpose(1, 2)

    q, k, v = heads(blk.attn.W_Q(qk)), heads(blk.attn.W_K(qk)), heads(blk.attn.W_V(v_in))
    z = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, L, d)
    x1 = x0 + blk.attn.W_O(z)
    if ln == "post":
        x1 = norm(blk.ln_attn, x1)
    x2 = x1 + blk.mlp(norm(blk.ln_mlp, x1) if ln in ("pre_mlp", "pre") else x1)
    if ln == "post":
        x2 = norm(blk.ln_mlp, x2)
    logits: torch.Tensor = model.readout_scale * model.readout(x2[:, -1])
    return logits


@pytest.mark.parametrize("layernorm", LAYERNORMS)
def test_shapes_and_equal_to_full_sequence_pass(layernorm: str) -> None:
    cfg = tconfig(layernorm)
    torch.manual_seed(0)
    model = build_transformer(cfg)
    with torch.no_grad():  # LN's affine parameters away from (1, 0), so a misplaced LN shows
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    x = batch(cfg)
    out = model(x)
    assert out.shape == (5, cfg.data.p)
    torch.testing.assert_close(out, full_sequence_logits(model, x), rtol=1e-5, atol=1e-6)


EXPECTED_LNS = {
    "none": set(),
    "pre_attn": {"ln_attn"},
    "pre_mlp": {"ln_mlp"},
    "pre": {"ln_attn", "ln_mlp"},
    "post": {"ln_attn", "ln_mlp"},
    "qk": {"ln_attn"},
    "v": {"ln_attn"},
}


@pytest.mark.parametrize("layernorm", LAYERNORMS)
def test_layernorm_sits_where_the_doc_says(layernorm: str) -> None:
    """Hook every LN and every linear map; check each one's input against docs/TRANSFORMER.md."""
    cfg = tconfig(layernorm)
    torch.manual_seed(0)
    model = build_transformer(cfg)
    blk = model.block
    mods = {
        "W_Q": blk.attn.W_Q,
        "W_K": blk.attn.W_K,
        "W_V": blk.attn.W_V,
        "W_O": blk.attn.W_O,
        "fc_in": blk.mlp.fc_in,
        "fc_out": blk.mlp.fc_out,
        "readout": model.readout,
    }
    lns = {n: m for n, m in (("ln_attn", blk.ln_attn), ("ln_mlp", blk.ln_mlp)) if m is not None}
    assert set(lns) == EXPECTED_LNS[layernorm]
    seen: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    for name, m in {**mods, **lns}.items():
        m.register_forward_hook(lambda _m, i, o, name=name: seen.__setitem__(name, (i[0].detach(), o.detach())))
    x = batch(cfg)
    model(x)
    assert set(seen) == set(mods) | set(lns)  # every LN that exists is used
    inp = {n: v[0] for n, v in seen.items()}
    out = {n: v[1] for n, v in seen.items()}
    x0 = (model.embedding(x) + model.pos_embedding).detach()
    eq = torch.testing.assert_close

    # Attention inputs: LN(x0) on the Q/K path (pre_attn, pre, qk) and the V path (pre_attn, pre, v).
    ln_qk, ln_v = layernorm in ("pre_attn", "pre", "qk"), layernorm in ("pre_attn", "pre", "v")
    if ln_qk or ln_v:
        eq(inp["ln_attn"], x0)
    normed = out["ln_attn"] if ln_qk or ln_v else x0  # read only where an LN sits on that path
    eq(inp["W_Q"], (normed if ln_qk else x0)[:, -1])
    eq(inp["W_K"], normed if ln_qk else x0)
    eq(inp["W_V"], normed if ln_v else x0)

    # x1 = x0 + Attn (post: LN of that sum); MLP input is LN(x1) for pre_mlp and pre.
    x1 = x0[:, -1] + out["W_O"]
    if layernorm == "post":
        eq(inp["ln_attn"], x1)
        x1 = out["ln_attn"]
    if layernorm in ("pre_mlp", "pre"):
        eq(inp["ln_mlp"], x1)
        eq(inp["fc_in"], out["ln_mlp"])
    else:
        eq(inp["fc_in"], x1)
    x2 = x1 + out["fc_out"]
    if layernorm == "post":
        eq(inp["ln_mlp"], x2)
        x2 = out["ln_mlp"]
    eq(inp["readout"], x2)  # the readout reads the `=` row of the block's output


def test_readout_scale_multiplies_the_logits() -> None:
    x = batch(tconfig())
    torch.manual_seed(0)
    base = build_model(tconfig())(x)
    torch.manual_seed(0)
    scaled = build_model(tconfig(model__readout_scale=3.0))(x)
    torch.testing.assert_close(scaled, 3.0 * base)


def test_default_widths_are_the_layernorm_papers() -> None:
    model = build_transformer(tiny_config(model__kind="transformer", model__d_embed=128, data__p=97))
    assert model.block.attn.n_heads == 4 and model.block.mlp.fc_in.out_features == 512
    assert model.embedding.weight.shape == (99, 128) and model.pos_embedding.shape == (4, 128)
    assert model.readout.weight.shape == (97, 128)
    assert math.isclose(float(model.embedding.weight.detach().std()), 128**-0.5, rel_tol=0.1)  # E ~ N(0, 1/d)


def test_e_and_w_names_and_the_embedding_group() -> None:
    cfg = tconfig()
    model = build_transformer(cfg)
    assert embedding_names(model) == ["embedding.weight"]  # the token embedding, not the positions
    assert w_names(model, cfg) == ["block.attn.W_Q.weight", "block.attn.W_K.weight", "block.attn.W_V.weight"]
    over = tconfig(model__w_params="block.attn.W_*.weight, block.mlp.fc_in.weight")
    assert len(w_names(model, over)) == 5
    opt = build_optimizer(model, tconfig(optim__lr_ratio=10.0))
    assert opt.param_groups[0]["params"] == [model.embedding.weight]
    assert opt.param_groups[0]["lr"] == pytest.approx(10 * opt.param_groups[1]["lr"])
    assert any(p is model.pos_embedding for p in opt.param_groups[1]["params"])


def test_adaptive_ratio_takes_the_largest_sigma_over_q_k_v() -> None:
    cfg = tconfig(optim__ratio_max=1e6)
    model = build_transformer(cfg)
    c, _, s_e, s_w = adaptive_ratio(model, cfg, f_e=0.5)
    params = dict(model.named_parameters())
    sig = [float(torch.linalg.svdvals(params[n].detach().double())[0]) for n in w_names(model, cfg)]
    assert s_w == pytest.approx(max(sig))
    assert c == pytest.approx(cfg.optim.kappa * s_e / s_w / 0.5)


@pytest.mark.parametrize("layernorm", ["none", "pre", "post", "qk"])
def test_trains_in_the_trainer_with_adaptive_adam_lr(layernorm: str) -> None:
    cfg = tconfig(layernorm, optim__adaptive=True, optim__adaptive_every=10, optim__lr=3e-3)
    tr = Trainer(cfg)
    finished = list(tr)[-1]
    assert isinstance(finished, RunFinished)
    assert finished.status == "finished" and finished.summary.steps == 60
    assert tr.lr_ratio >= cfg.optim.ratio_min and math.isfinite(tr.lr_ratio)
    acc = finished.summary.final_train_acc
    assert acc is not None and acc > 1 / cfg.data.p  # it learned something


@pytest.mark.parametrize(
    ("name", "layernorm"),
    [
        ("ln_none", "none"),
        ("ln_pre", "pre"),
        ("ln_post", "post"),
        ("ln_qk", "qk"),
        ("ln_v", "v"),
        ("ln_mlp", "pre_mlp"),
    ],
)
def test_ln_presets(name: str, layernorm: str) -> None:
    from engine.config.presets import load_preset

    p = load_preset(name)
    assert p.config.model.kind == "transformer" and p.config.model.layernorm == layernorm and not p.is_sweep


def test_sweep_presets_expand() -> None:
    from engine.config.presets import load_preset
    from engine.sweep.spec import expand, parse_sweep

    ln = load_preset("ln_placement")
    members = expand(ln.config, parse_sweep(ln.sweep))
    assert len(members) == 6 * 3 and {c.model.layernorm for _, c in members} == set(LAYERNORMS) - {"pre_attn"}
    acc = load_preset("accelerators_mul")
    spec = parse_sweep(acc.sweep)
    members = expand(acc.config, spec)
    assert spec.compare == "adam" and spec.tune == ("optim.lr",) and len(members) == 5 * 2 * 3
    ortho = [c for m, c in members if m.arm == "orthoadamw"]
    assert all(c.optim.orthogonal and c.optim.name == "adamw" for c in ortho)
    assert all(c.data == acc.config.data for _, c in members)  # the same split for every arm
