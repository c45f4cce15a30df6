"""The ProbeSet as the trainer sees it: columns, cadences, no effect on training, determinism, resume."""

from __future__ import annotations

import math

import pytest
import torch

from engine.events import EvalLogged, FourierLogged, TokensLogged
from engine.probes import DEFAULT_CADENCES
from engine.probes.base import Blocks
from engine.probes.norms import NormProbe, UpdateProbe
from engine.rundir.columns import BASE_COLUMNS
from engine.train.trainer import Trainer
from tests.conftest import tiny_config

ALL_ON = {k.replace(".", "__"): 20 for k in DEFAULT_CADENCES} | {"probe__hessian_all": True}


def _run(
    tr: Trainer,
) -> tuple[list[dict[str, float]], list[tuple[float, ...] | None], list[tuple[float, ...]]]:
    rows: list[dict[str, float]] = []
    grads: list[tuple[float, ...] | None] = []
    spectra: list[tuple[float, ...]] = []
    for ev in tr:
        if isinstance(ev, EvalLogged):
            rows.append(ev.row)
        elif isinstance(ev, TokensLogged):
            grads.append(ev.grad_norm)
        elif isinstance(ev, FourierLogged):
            spectra.append(ev.norms)
    return rows, grads, spectra


def test_columns_are_exactly_those_of_the_enabled_probes() -> None:
    assert Trainer(tiny_config()).probes.columns() == []
    tr = Trainer(tiny_config(**ALL_ON))
    cols = tr.probes.columns()
    assert cols == [
        "hess_E", "hess_W", "hess_all", "hess_iters",
        "sigma_E", "sigma_W", "sigma_ratio", "rank_E", "rank_W", "rank_EW", "erank_E", "erank_W", "erank_EW",
        "norm_E", "norm_W", "norm_all", "update_ratio", "med", "fourier_top",
    ]  # fmt: skip
    rows, _, _ = _run(tr)
    for row in rows:
        assert set(row) == set(BASE_COLUMNS) | set(cols)
        if math.isfinite(row["sigma_E"]):
            assert row["sigma_ratio"] == row["sigma_E"] / row["sigma_W"]
    assert Trainer(tiny_config(probe__med_every=5)).probes.columns() == ["med"]


def test_raw_mlp_skips_the_embedding_probes() -> None:
    tr = Trainer(tiny_config(model__kind="mlp_raw", **ALL_ON))
    cols = tr.probes.columns()
    assert cols == ["hess_W", "hess_all", "hess_iters", "sigma_W", "rank_W", "erank_W", "norm_W", "norm_all"]
    rows, grads, spectra = _run(tr)
    assert all(math.isfinite(rows[-1][c]) for c in cols)
    assert grads == [None] * len(rows) and spectra == []


def test_probe_runs_at_first_eval_at_or_after_each_multiple() -> None:
    tr = Trainer(tiny_config(probe__rank_every=30, train__max_steps=100, train__eval_every=20))
    rows, _, _ = _run(tr)
    ran = [r["step"] for r in rows if not math.isnan(r["rank_W"])]
    assert ran == [0, 40, 60, 100]


def test_probes_do_not_change_training() -> None:
    """Same seed, all probes on at every evaluation vs all off: identical training metrics."""
    on, _, _ = _run(Trainer(tiny_config(**ALL_ON, train__max_steps=80)))
    off, _, _ = _run(Trainer(tiny_config(train__max_steps=80)))
    keys = [c for c in BASE_COLUMNS if c != "wall_s"]
    assert len(on) == len(off) == 5
    for a, b in zip(on, off, strict=True):
        assert {k: a[k] for k in keys} == pytest.approx({k: b[k] for k in keys}, abs=0, rel=0, nan_ok=True)


def test_same_seed_same_probe_values() -> None:
    a = _run(Trainer(tiny_config(**ALL_ON)))
    b = _run(Trainer(tiny_config(**ALL_ON)))
    cols = Trainer(tiny_config(**ALL_ON)).probes.columns()
    for ra, rb in zip(a[0], b[0], strict=True):
        assert [ra[c] for c in cols] == pytest.approx([rb[c] for c in cols], abs=0, rel=0, nan_ok=True)
    assert a[1] == b[1] and a[2] == b[2]


def test_resume_continues_the_probes_bit_for_bit() -> None:
    straight, _, _ = _run(Trainer(tiny_config(**ALL_ON, train__max_steps=100)))
    first = Trainer(tiny_config(**ALL_ON, train__max_steps=40))
    _run(first)
    resumed, _, _ = _run(Trainer(tiny_config(**ALL_ON, train__max_steps=100), state=first.state_dict()))
    cols = first.probes.columns()
    tail = [r for r in straight if r["step"] > 40]
    assert [r["step"] for r in resumed] == [r["step"] for r in tail]
    for a, b in zip(resumed, tail, strict=True):
        assert [a[c] for c in cols] == pytest.approx([b[c] for c in cols], abs=0, rel=0, nan_ok=True)


def test_grad_norm_is_zero_exactly_for_tokens_absent_from_the_last_batch() -> None:
    tr = Trainer(tiny_config(probe__grad_every=20, train__batch_size=4))
    seen: list[torch.Tensor] = []
    on_step = tr.probes.on_step

    def spy(x: torch.Tensor) -> None:
        seen.append(x.clone())
        on_step(x)

    tr.probes.on_step = spy  # type: ignore[method-assign]  # a spy on the batch each step sees
    _, grads, _ = _run(tr)
    assert grads[0] is None  # no step before the evaluation at step 0
    present = set(seen[-1].reshape(-1).tolist())
    g = grads[-1]
    assert g is not None
    assert len(g) == tr.cfg.data.vocab_size
    assert {t for t, v in enumerate(g) if v > 0} == present
    assert len(present) < len(g)  # a batch of 4 leaves tokens out: the sparse columns of Fig. 3


def test_norms_and_update_ratio_by_hand() -> None:
    cfg = tiny_config(probe__norm_every=1, probe__update_every=1)
    tr = Trainer(cfg)
    blocks = Blocks.of(tr.model, cfg)
    E, W = tr.model.get_parameter("embedding.weight"), tr.model.get_parameter("first_layer.weight")
    En, Wn = E.detach().double(), W.detach().double()
    norms = NormProbe(cfg, blocks).measure(0)
    assert norms["norm_E"] == pytest.approx(float(torch.linalg.norm(En)), rel=1e-12)
    assert norms["norm_W"] == pytest.approx(float(torch.linalg.norm(Wn)), rel=1e-12)
    theta = torch.cat([p.detach().double().reshape(-1) for p in tr.model.parameters()])
    assert norms["norm_all"] == pytest.approx(float(theta.norm()), rel=1e-12)
    upd = UpdateProbe(cfg, blocks)
    assert math.isnan(upd.measure(0)["update_ratio"])
    with torch.no_grad():
        E[0, 0] += 3.0  # ‖ΔE‖ = 3
        W[1, :2] += torch.tensor([0.3, 0.4])  # ‖ΔW‖ = 0.5
    assert upd.measure(1)["update_ratio"] == pytest.approx(6.0, rel=1e-5)
