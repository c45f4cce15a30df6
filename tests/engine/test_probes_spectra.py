"""Numerical rank, effective rank and the EW map, on matrices whose answer is known by construction."""

from __future__ import annotations

import math

import pytest
import torch

from engine.probes.spectra import RankProbe
from engine.probes.spectral import effective_rank, ew_matrix, numerical_rank, reader_matrix, sigma_max, singular_values
from engine.train.loop import TrainLoop
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def _with_spectrum(s: list[float], m: int, n: int, seed: int = 0) -> torch.Tensor:
    """U diag(s) Vᵀ with random orthonormal U (m×k), V (n×k)."""
    g = torch.Generator().manual_seed(seed)
    u, _ = torch.linalg.qr(torch.randn(m, len(s), generator=g, dtype=torch.float64))
    v, _ = torch.linalg.qr(torch.randn(n, len(s), generator=g, dtype=torch.float64))
    out: torch.Tensor = u @ torch.diag(torch.tensor(s, dtype=torch.float64)) @ v.T
    return out


def test_numerical_rank_counts_above_relative_threshold() -> None:
    a = _with_spectrum([10.0, 5.0, 1.0, 0.02, 1e-5, 1e-9], 20, 12)
    s = singular_values(a)
    assert numerical_rank(s, 1e-3) == 4  # 0.02 > 10·1e-3 = 0.01 > 1e-5
    assert numerical_rank(s, 1e-2) == 3
    assert numerical_rank(singular_values(1000 * a), 1e-3) == 4  # scale-free
    assert numerical_rank(singular_values(a.float()), 1e-3) == 4
    assert numerical_rank(singular_values(torch.zeros(3, 4)), 1e-3) == 0


def test_effective_rank_known_spectra() -> None:
    assert effective_rank(singular_values(_with_spectrum([3.0], 8, 8))) == pytest.approx(1.0, abs=1e-6)
    assert effective_rank(singular_values(_with_spectrum([2.0] * 5, 9, 7))) == pytest.approx(5.0, rel=1e-9)
    s = torch.tensor([3.0, 1.0], dtype=torch.float64)  # p = (3/4, 1/4)
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert effective_rank(s) == pytest.approx(math.exp(h), rel=1e-12)
    assert effective_rank(torch.zeros(3, dtype=torch.float64)) == 0.0


def test_sigma_max() -> None:
    assert sigma_max(_with_spectrum([7.5, 2.0, 0.1], 6, 5)) == pytest.approx(7.5, rel=1e-12)


def test_ew_is_the_map_from_position_one_hots_to_preactivations() -> None:
    """Row (j·V + t) of EW is the first layer's pre-activation (minus bias) for token t at position j, alone."""
    cfg = tiny_config()
    tr = Trainer(cfg)
    E, W = tr.model.get_parameter("embedding.weight").detach(), tr.model.get_parameter("first_layer.weight").detach()
    V, d, L = E.shape[0], E.shape[1], cfg.data.seq_len
    R = reader_matrix(W, d)
    assert R is not None
    M = ew_matrix(E, R, d)
    assert M.shape == (L * V, W.shape[0])
    for j, t in [(0, 0), (1, V - 2), (2, 3), (3, V - 1)]:
        x = torch.zeros(L * d)
        x[j * d : (j + 1) * d] = E[t]  # only position j carries token t
        assert torch.allclose(M[j * V + t], W @ x, atol=1e-6)
    # EW = blockdiag(E, ..., E) · Wᵀ, so rank(EW) <= min(rank(E)·L, rank(W))
    assert numerical_rank(singular_values(M)) <= min(L * min(V, d), W.shape[0])


def test_reader_matrix_layouts() -> None:
    d = 4

    def shape(w: torch.Tensor) -> tuple[int, ...]:
        r = reader_matrix(w, d)
        assert r is not None
        return tuple(r.shape)

    assert shape(torch.zeros(6, 3 * d)) == (6, 3 * d)  # nn.Linear (out, in)
    assert shape(torch.zeros(d, 6)) == (6, d)  # (in, out)
    assert shape(torch.zeros(2, d, 3)) == (6, d)  # (heads, d, d_head)
    assert reader_matrix(torch.zeros(5, 7), d) is None


# --- the probe on the device: the host functions' numbers, one batched SVD per matrix --------------


def _host_columns(probe: RankProbe) -> dict[str, float]:
    """The rank probe's columns computed one matrix at a time on the host (engine/probes/spectral.py)."""
    b = probe.blocks
    mats = probe.matrices()
    out: dict[str, float] = {}
    if b.E is not None:
        out["sigma_E"] = sigma_max(b.E)
    out["sigma_W"] = max(sigma_max(w) for w in b.Ws)
    if b.E is not None:
        out["sigma_ratio"] = out["sigma_E"] / out["sigma_W"]
    for m in probe.mats:
        mat = mats[m]
        assert mat is not None, m
        s = singular_values(mat)
        out[f"rank_{m}"] = numerical_rank(s, probe.tol)
        out[f"erank_{m}"] = effective_rank(s)
    return out


REL = 1e-9  # both are float64 LAPACK SVDs of the same matrices; batched, the order of work differs


def _assert_close(got: dict[str, float], want: dict[str, float]) -> None:
    assert set(got) == set(want)
    for k, v in want.items():
        if k.startswith("rank_"):
            assert got[k] == v, k
        else:
            assert got[k] == pytest.approx(v, rel=REL), k


@pytest.mark.parametrize(
    "over",
    [
        {"probe__rank_every": 20},
        {"probe__rank_every": 20, "model__kind": "mlp_raw"},
        {"probe__rank_every": 20, "model__kind": "transformer", "model__d_embed": 16},
    ],
)
def test_device_probe_equals_the_host_functions(over: dict[str, object]) -> None:
    tr = Trainer(tiny_config(**over))
    for _ in zip(range(30), tr, strict=False):  # some trained steps: a spectrum that is not the init's
        pass
    probe = next(p for p in tr.probe_sets[0].probes if isinstance(p, RankProbe))
    _assert_close(probe.measure(20), _host_columns(probe))


def test_stacked_members_share_one_svd_per_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three stacked members: one SVD per matrix for all of them at an evaluation, each member's columns
    those of its own matrices (what its solo probe computes on the same weights)."""
    cfgs = [tiny_config(train__seed=s, probe__rank_every=20) for s in (0, 1, 2)]
    loop = TrainLoop(cfgs, stacked=True)
    probes = [next(p for p in ps.probes if isinstance(p, RankProbe)) for ps in loop.probe_sets]
    calls: list[tuple[int, ...]] = []
    svdvals = torch.linalg.svdvals

    def counted(a: torch.Tensor) -> torch.Tensor:
        calls.append(tuple(a.shape))
        s: torch.Tensor = svdvals(a)
        return s

    monkeypatch.setattr(torch.linalg, "svdvals", counted)
    rows = [p.measure(0) for p in probes]
    assert len(calls) == 3 and all(c[0] == 3 for c in calls)  # E, W, EW: each (3, m, n)
    monkeypatch.setattr(torch.linalg, "svdvals", svdvals)
    for p, row in zip(probes, rows, strict=True):
        _assert_close(row, _host_columns(p))
    assert rows[0]["sigma_E"] != rows[1]["sigma_E"]  # each its own member's weights
