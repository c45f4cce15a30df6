"""λmax by power iteration on HVPs, checked against the dense Hessian's eigenvalues (App. C.1)."""

from __future__ import annotations

import math

import pytest
import torch
from torch.func import functional_call

from engine.config import RunConfig
from engine.events import EvalLogged
from engine.probes.hessian import HessianProbe, largest_eigenvalue, power_iteration
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def _sym(eigs: list[float], seed: int = 0) -> torch.Tensor:
    """Q diag(eigs) Qᵀ with a random orthogonal Q, in float64."""
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(len(eigs), len(eigs), generator=g, dtype=torch.float64))
    out: torch.Tensor = q @ torch.diag(torch.tensor(eigs, dtype=torch.float64)) @ q.T
    return out


def _lmax(a: torch.Tensor, v0: torch.Tensor, iters: int = 2000, tol: float = 1e-12) -> tuple[float, int]:
    first, second = largest_eigenvalue(lambda v: a @ v, v0, v0.flip(0), iters, tol)
    if second is None:
        return first.value, first.iters
    return second.value + first.value, first.iters + second.iters


def test_power_iteration_positive_dominant() -> None:
    a = _sym([5.0, 3.0, 1.0, -2.0, 0.5, 0.0])
    lam, _ = _lmax(a, torch.ones(6, dtype=torch.float64))
    assert lam == pytest.approx(5.0, rel=1e-9)


def test_negative_dominant_spectrum_uses_the_shift() -> None:
    """|λ| is largest at −7, but λmax (largest algebraic) is 2: the shifted iteration must find it."""
    a = _sym([-7.0, 2.0, 1.0, -3.0, 0.5])
    v0 = torch.arange(1.0, 6.0, dtype=torch.float64)
    first, second = largest_eigenvalue(lambda v: a @ v, v0, v0.flip(0), 2000, 1e-12)
    assert first.value == pytest.approx(-7.0, rel=1e-9)
    assert second is not None
    assert second.value + first.value == pytest.approx(2.0, rel=1e-8)


def test_all_negative_spectrum() -> None:
    a = _sym([-7.0, -2.0, -4.0])
    lam, _ = _lmax(a, torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    assert lam == pytest.approx(-2.0, rel=1e-8)


def test_equal_and_opposite_pair_is_not_a_false_stop() -> None:
    """With λ = ±3 the Rayleigh quotient stalls at a wrong value; the residual check must refuse to stop."""
    a = torch.diag(torch.tensor([3.0, -3.0, 1.0], dtype=torch.float64))
    e = power_iteration(lambda v: a @ v, torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64), 50, 1e-3)
    assert not e.converged and e.iters == 50


def test_warm_start_converges_at_once() -> None:
    a = _sym([4.0, 3.9, 1.0, 0.2])
    cold = power_iteration(lambda v: a @ v, torch.ones(4, dtype=torch.float64), 5000, 1e-10)
    warm = power_iteration(lambda v: a @ v, cold.vector, 5000, 1e-10)
    assert cold.converged and warm.converged
    assert warm.iters <= 3 < cold.iters


def _dense_hessian(tr: Trainer, names: list[str]) -> torch.Tensor:
    params = {n: p.detach() for n, p in tr.model.named_parameters()}
    shapes = [(n, params[n].shape, params[n].numel()) for n in names]
    flat = torch.cat([params[n].reshape(-1) for n in names])
    data = tr.data[0]  # the run's dataset (engine/task/dataset.py)

    def loss(theta: torch.Tensor) -> torch.Tensor:
        block: dict[str, torch.Tensor] = {}
        i = 0
        for n, shape, size in shapes:
            block[n] = theta[i : i + size].view(shape)
            i += size
        return tr.loss_fn(functional_call(tr.model, {**params, **block}, (data.x_train,)), data.y_train)

    h: torch.Tensor = torch.func.hessian(loss)(flat)
    return h


def _dense_config(**over: object) -> RunConfig:
    """p=5, d_embed=4, float64, trained 150 steps: small enough for a dense Hessian; the probe on the
    whole training set (no probe batch), iterated to 1e-14."""
    return tiny_config(
        data__p=5,
        model__d_embed=4,
        train__dtype="float64",
        train__max_steps=150,
        train__eval_every=150,
        data__frac_train=0.6,
        probe__hessian_every=150,
        probe__hessian_batch=0,
        probe__hessian_iters=20000,
        probe__hessian_tol=1e-14,
        **over,
    )


def test_lambda_max_matches_dense_hessian() -> None:
    """p=5, d_embed=4, float64: power iteration against eigvalsh for the E block, the W block and all of θ."""
    cfg = _dense_config(probe__hessian_all=True)
    tr = Trainer(cfg)
    rows = [ev.row for ev in tr if isinstance(ev, EvalLogged)]
    names = {"E": ["embedding.weight"], "W": ["first_layer.weight"], "all": [n for n, _ in tr.model.named_parameters()]}
    for key, block in names.items():
        exact = torch.linalg.eigvalsh(_dense_hessian(tr, block))
        got = rows[-1][f"hess_{key}"]
        assert math.isfinite(got)
        assert got == pytest.approx(float(exact[-1]), rel=1e-8), (key, exact[[0, -1]])
    assert 1 <= rows[-1]["hess_iters"] <= 2 * 20000


def test_hessian_probe_leaves_training_state_alone() -> None:
    """The functional copy: .grad, the optimizer state, the weights and torch's RNG are untouched."""
    tr = Trainer(tiny_config(probe__hessian_every=20, probe__hessian_all=True, train__max_steps=20))
    for _ in tr:
        pass
    before_rng = torch.get_rng_state()
    grads = {n: None if p.grad is None else p.grad.clone() for n, p in tr.model.named_parameters()}
    weights = {n: p.detach().clone() for n, p in tr.model.named_parameters()}
    opt = {k: {kk: vv.clone() for kk, vv in s.items()} for k, s in tr.opt.state.items()}
    probe = tr.probes.probes[0]
    assert probe.name == "hessian"
    out = probe.measure(tr.step)
    assert all(math.isfinite(v) for v in out.values())
    assert torch.equal(torch.get_rng_state(), before_rng)
    for n, p in tr.model.named_parameters():
        assert torch.equal(p.detach(), weights[n])
        g = grads[n]
        assert (p.grad is None and g is None) or (p.grad is not None and g is not None and torch.equal(p.grad, g))
    for k, s in tr.opt.state.items():
        for kk, vv in s.items():
            assert torch.equal(vv, opt[k][kk])


def test_stop_request_aborts_the_measurement() -> None:
    tr = Trainer(tiny_config(probe__hessian_every=20, probe__hessian_iters=10_000, probe__hessian_tol=1e-30))
    tr.stop("interrupted")
    out = tr.probes.probes[0].measure(0)
    assert math.isnan(out["hess_E"]) and out["hess_iters"] == 0


# --- the probe's options: L2 term, dominant |λ|, W = first layer or every downstream parameter ------------


class _Quadratic(torch.nn.Module):
    """L(θ) = ½ θᵀAθ over θ = [E (2), W (2), b (2)]: the Hessian is A, written by hand."""

    def __init__(self, a: torch.Tensor) -> None:
        super().__init__()
        self.a = a
        self.embedding = torch.nn.Linear(2, 1, bias=False)  # embedding.weight, (1, 2)
        self.first_layer = torch.nn.Linear(2, 1, bias=False)  # first_layer.weight
        self.head = torch.nn.Linear(2, 1, bias=False)  # head.weight: downstream, not the first layer
        for p, v in zip(self.parameters(), ([0.3, -0.2], [0.1, 0.4], [-0.5, 0.2]), strict=True):
            with torch.no_grad():
                p.copy_(torch.tensor([v], dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        theta = torch.cat([self.embedding.weight[0], self.first_layer.weight[0], self.head.weight[0]])
        return 0.5 * theta @ self.a @ theta + 0 * x.sum()


def _quadratic_probe(a: torch.Tensor, **probe: object) -> dict[str, float]:
    from engine.probes.base import Blocks, ProbeContext

    model = _Quadratic(a).double()
    over = {f"probe__{k}": v for k, v in probe.items()}
    cfg = tiny_config(optim__weight_decay=0.25, probe__hessian_every=1, probe__hessian_batch=0, **over)
    x = torch.zeros(3, 1, dtype=torch.long)
    ctx = ProbeContext.of_model(cfg, model, lambda out, y: out, x, torch.zeros(3, dtype=torch.long), lambda: False)
    return HessianProbe(ctx, Blocks.of(model, cfg)).measure(0)


# Blocks (E, first W, head): E's dominant eigenvalue is −6 (λmax 1), the first layer's −5 (λmax 2), and
# the E-free block (first layer + head) has dominant −5 but λmax 4.
_A = torch.zeros(6, 6, dtype=torch.float64)
_A[:2, :2] = _sym([-6.0, 1.0], seed=1)
_A[2:4, 2:4] = _sym([-5.0, 2.0], seed=2)
_A[4:, 4:] = _sym([4.0, 0.5], seed=3)
_A[0, 2] = _A[2, 0] = 0.7  # E-W coupling: the full Hessian is not block-diagonal
_BLOCKS = {"E": [0, 1], "W": [2, 3], "Wall": [2, 3, 4, 5]}


def _exact(idx: list[int], l2: bool, dominant: bool) -> float:
    eig = torch.linalg.eigvalsh(_A[idx][:, idx] + (0.25 * torch.eye(len(idx), dtype=torch.float64) if l2 else 0))
    return float(eig[eig.abs().argmax()]) if dominant else float(eig[-1])


@pytest.mark.parametrize("w", ["first", "all"])
@pytest.mark.parametrize("dominant", [False, True])
@pytest.mark.parametrize("l2", [False, True])
def test_each_option_matches_eigvalsh_of_the_hand_built_hessian(l2: bool, dominant: bool, w: str) -> None:
    out = _quadratic_probe(_A, hessian_l2=l2, hessian_abs=dominant, hessian_w=w, hessian_iters=20000, hessian_tol=1e-14)
    suffix = ("_abs" if dominant else "") + ("_l2" if l2 else "")
    wkey = "W" if w == "first" else "Wall"
    assert set(out) == {f"hess_E{suffix}", f"hess_{wkey}{suffix}", "hess_iters"}
    for key in ("E", wkey):
        assert out[f"hess_{key}{suffix}"] == pytest.approx(_exact(_BLOCKS[key], l2, dominant), rel=1e-8), key


def test_the_options_change_the_number() -> None:
    """On this Hessian every option moves λ: they are not three names for one measurement."""
    base = _quadratic_probe(_A, hessian_iters=20000, hessian_tol=1e-14)
    assert base["hess_E"] == pytest.approx(1.0, rel=1e-8)
    assert _quadratic_probe(_A, hessian_l2=True, hessian_iters=20000, hessian_tol=1e-14)["hess_E_l2"] == pytest.approx(
        1.25, rel=1e-8
    )
    assert _quadratic_probe(_A, hessian_abs=True, hessian_iters=20000, hessian_tol=1e-14)[
        "hess_E_abs"
    ] == pytest.approx(-6.0, rel=1e-8)


def test_paper_options_match_dense_hessian_of_the_mlp() -> None:
    """The MLP (p=5, float64): hess_E_abs_l2 and hess_Wall_abs_l2 against eigvalsh of H + wd·I."""
    cfg = _dense_config(probe__hessian_l2=True, probe__hessian_abs=True, probe__hessian_w="all")
    tr = Trainer(cfg)
    rows = [ev.row for ev in tr if isinstance(ev, EvalLogged)]
    rest = [n for n, _ in tr.model.named_parameters() if n != "embedding.weight"]
    for key, block in {"E": ["embedding.weight"], "Wall": rest}.items():
        h = _dense_hessian(tr, block)
        eig = torch.linalg.eigvalsh(h + cfg.optim.weight_decay * torch.eye(len(h), dtype=h.dtype))
        got = rows[-1][f"hess_{key}_abs_l2"]
        assert got == pytest.approx(float(eig[eig.abs().argmax()]), rel=1e-8), (key, eig[[0, -1]])


# --- the device measurement: the host loop's numbers, one host read per measurement -----------------


def _probe_pair(**over: object) -> tuple[Trainer, HessianProbe, HessianProbe]:
    """A trained tiny run and two fresh Hessian probes on its weights: one host loop, one device loop."""
    from engine.probes.base import Blocks

    tr = Trainer(tiny_config(probe__hessian_every=20, train__max_steps=40, **over))
    for _ in tr:
        pass
    probe = tr.probes.probes[0]
    assert isinstance(probe, HessianProbe)
    ctx = probe.ctx
    host, device = (HessianProbe(ctx, Blocks.of(ctx.model, ctx.cfg, ctx.params)) for _ in range(2))
    device.mode = "device"
    return tr, host, device


@pytest.mark.parametrize(
    "over",
    [
        {},
        {"probe__hessian_all": True, "probe__hessian_l2": True},
        {"probe__hessian_abs": True, "probe__hessian_w": "all"},
        {"probe__hessian_iters": 3},  # capped before the rule is met: the last λ, iters = the cap
    ],
)
def test_device_measurement_equals_the_host_loop(over: dict[str, object]) -> None:
    """Three measurements in a row (warm starts carried), the device loop against the host loop: the same
    λ within REL (the same float arithmetic in another grouping of ops) and the same HVP counts."""
    rel = 1e-6
    _, host, device = _probe_pair(**over)
    for step in (0, 20, 40):
        want, got = host.measure(step), device.measure(step)
        assert set(got) == set(want)
        assert got["hess_iters"] == want["hess_iters"]
        for k, v in want.items():
            assert got[k] == pytest.approx(v, rel=rel), (step, k)
        assert set(device.vectors) == set(host.vectors)
    assert device.recording is not None and device.recording.graph is not None  # recorded, then replayed


def test_device_measurement_reads_the_host_once(monkeypatch: pytest.MonkeyPatch) -> None:
    _, host, device = _probe_pair(probe__hessian_all=True)
    reads = {"n": 0}
    for name in ("tolist", "item", "__float__", "__bool__", "__int__"):
        inner = getattr(torch.Tensor, name)

        def counted(self: torch.Tensor, *a: object, _inner=inner) -> object:
            reads["n"] += 1
            return _inner(self, *a)

        monkeypatch.setattr(torch.Tensor, name, counted)
    device.measure(0)
    device_reads = reads["n"]
    reads["n"] = 0
    host.measure(0)
    assert device_reads == 1
    assert reads["n"] > 10  # the host loop reads once per HVP
