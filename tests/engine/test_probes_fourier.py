"""The Fourier spectrum of E, its top-k share, and MED, on hand-built embeddings (App. C.3)."""

from __future__ import annotations

import math

import pytest
import torch

from engine.probes.fourier import embedding_spectrum, top_k_share
from engine.probes.med import main_embedding_difference


def _cos_embedding(p: int, ks: list[int], d: int = 6) -> torch.Tensor:
    """e_i = Σ_k cos(2πk·i/p) · u_k (+ a phase-shifted copy), u_k fixed directions in R^d."""
    i = torch.arange(p, dtype=torch.float64)[:, None]
    g = torch.Generator().manual_seed(1)
    e = torch.zeros(p, d, dtype=torch.float64)
    for k in ks:
        u, w = torch.randn(2, d, generator=g, dtype=torch.float64)
        e += torch.cos(2 * math.pi * k * i / p) * u + torch.sin(2 * math.pi * k * i / p) * w
    return e


@pytest.mark.parametrize("k", [1, 7, 23, 48])
def test_dft_peak_at_the_built_frequency(k: int) -> None:
    p = 97
    spec = embedding_spectrum(_cos_embedding(p, [k]) + 0.5)  # + a DC offset, which lands at k = 0
    assert spec.shape == (p // 2 + 1,)
    assert int(spec[1:].argmax()) + 1 == k
    off_peak = torch.cat([spec[1:k], spec[k + 1 :]])
    assert float(off_peak.max()) < 1e-9 * float(spec[k])
    assert top_k_share(spec, 1) == pytest.approx(1.0, abs=1e-12)  # DC excluded


def test_top_k_share_of_two_peaks() -> None:
    p = 31
    spec = embedding_spectrum(_cos_embedding(p, [3, 11]))
    assert top_k_share(spec, 2) == pytest.approx(1.0, abs=1e-12)
    e3 = float(spec[3]) ** 2
    e11 = float(spec[11]) ** 2
    assert top_k_share(spec, 1) == pytest.approx(max(e3, e11) / (e3 + e11), rel=1e-12)


def test_white_noise_spectrum_is_diffuse() -> None:
    g = torch.Generator().manual_seed(0)
    spec = embedding_spectrum(torch.randn(97, 128, generator=g, dtype=torch.float64))
    assert top_k_share(spec, 5) < 0.2  # 5 of 48 frequencies hold about 5/48 of the energy


def test_med_on_hand_built_embeddings() -> None:
    # Points on a line, spaced 0, 1, 3, 6: differences 1, 2, 3 -> MED 2.
    e = torch.tensor([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0], [6.0, 0.0]])
    assert main_embedding_difference(e) == pytest.approx(2.0)
    # Unit circle with p points: each step is a chord 2·sin(π/p).
    p = 13
    t = 2 * math.pi * torch.arange(p, dtype=torch.float64) / p
    circle = torch.stack([t.cos(), t.sin()], 1)
    assert main_embedding_difference(circle) == pytest.approx(2 * math.sin(math.pi / p), rel=1e-12)
    assert main_embedding_difference(torch.ones(5, 3)) == 0.0


def test_primitive_roots() -> None:
    from engine.probes.fourier import primitive_root

    assert [primitive_root(p) for p in (3, 5, 7, 11, 13, 97)] == [2, 2, 3, 2, 2, 5]


def test_dlog_order_puts_a_multiplicative_character_at_one_frequency() -> None:
    """e_a = cos(2πk·log_g a/(p-1)) u + sin(...) w is one frequency on the dlog axis and spread on the token axis."""
    from engine.config import ConfigError, RunConfig, apply_overrides
    from engine.probes.fourier import token_order

    p, k = 97, 7
    cfg = apply_overrides(RunConfig(), {"data.p": p, "probe.fourier_order": "dlog"})
    order = token_order(cfg)
    assert order[:3].tolist() == [1, 5, 25] and sorted(order.tolist()) == list(range(1, p))
    log = torch.zeros(p, dtype=torch.float64)
    log[order] = torch.arange(p - 1, dtype=torch.float64)
    g = torch.Generator().manual_seed(2)
    u, w = torch.randn(2, 6, generator=g, dtype=torch.float64)
    e = (
        torch.cos(2 * math.pi * k * log / (p - 1))[:, None] * u
        + torch.sin(2 * math.pi * k * log / (p - 1))[:, None] * w
    )
    dlog = embedding_spectrum(e[order])
    assert dlog.shape == ((p - 1) // 2 + 1,) and int(dlog[1:].argmax()) + 1 == k
    assert top_k_share(dlog, 1) > 0.999
    assert top_k_share(embedding_spectrum(e[token_order(RunConfig())]), 5) < 0.5
    with pytest.raises(ConfigError, match=r"probe\.fourier_order"):
        token_order(apply_overrides(RunConfig(), {"data.op": "add", "data.p": 9, "probe.fourier_order": "dlog"}))


def test_fourier_probe_reads_the_dlog_axis_in_a_run() -> None:
    from engine.events import FourierLogged
    from engine.train.trainer import Trainer
    from tests.conftest import tiny_config

    for order, n in (("token", 11 // 2 + 1), ("dlog", 10 // 2 + 1)):
        cfg = tiny_config(data__p=11, data__op="div", probe__fourier_every=10, probe__fourier_order=order)
        spectra = [e.norms for e in Trainer(cfg) if isinstance(e, FourierLogged)]
        assert spectra and all(len(s) == n for s in spectra)
