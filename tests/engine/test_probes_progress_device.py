"""The progress probe computes in torch where the model lives; on the CPU its row equals the numpy
arithmetic it replaced (tests/engine/numpy_progress.py, frozen), on the same inputs, to 1e-12."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from engine.config import RunConfig, apply_overrides
from engine.events import CircuitLogged, EvalLogged
from engine.probes.base import PROBE_SEED_OFFSET
from engine.probes.progress import ProgressProbe
from engine.train.trainer import Trainer
from tests.engine import numpy_progress

REL = 1e-12  # relative; values within ABS of 0 are compared absolutely (a coordinate or share near 0)
ABS = 1e-12
INTS = ("key_freqs", "ring_members", "ring_freq", "keys")


def numpy_row(probe: ProgressProbe) -> dict[str, Any]:
    """The old numpy probe's row on the probe's own logit table, labels, training pairs and E, now."""
    n = probe.axis.n
    train = np.zeros(n * n, dtype=bool)
    train[probe.train_idx.cpu().numpy()] = True
    E = probe.blocks.embedding.double().cpu().numpy()[probe.axis.order] if probe.blocks.e_names else None
    cfg = probe.ctx.cfg
    table = probe.logit_table().cpu().numpy()
    y = probe.y.cpu().numpy()
    seed = cfg.train.seed + PROBE_SEED_OFFSET
    return numpy_progress.measure_row(table, y, train.reshape(n, n), probe.axis.sign, cfg.probe.fixed_keys, E, seed)


def assert_same(got: Any, want: Any, key: str) -> None:
    if key in INTS:
        assert got == want, key
    elif isinstance(want, tuple):
        assert len(got) == len(want), key
        for g, w in zip(got, want, strict=True):
            assert_same(g, w, key)
    elif math.isnan(want):
        assert math.isnan(got), key
    else:
        assert math.isclose(got, want, rel_tol=REL, abs_tol=ABS), (key, got, want)


@pytest.mark.parametrize(
    ("op", "kind", "keys"),
    [("mul", "mlp_embed", ""), ("mul", "mlp_embed", "1,3"), ("sub", "transformer", ""), ("div", "mlp_onehot", "")],
)
def test_row_equals_the_numpy_probe_on_a_real_run(op: str, kind: str, keys: str) -> None:
    """At every measurement of a short CPU run, every column and every ring/keyfreq value the probe logs
    equals the frozen numpy version's on the same state: mul (n = 10, even: the Nyquist term) and sub
    (n = 11, sign −1), keys re-picked or held fixed, a model with E and one without."""
    over = {"data.p": "11", "data.op": op, "model.kind": kind, "train.max_steps": "60", "train.eval_every": "20"}
    over |= {"probe.progress_every": "20", "model.d_embed": "16", "model.d_hidden": "32", "model.d_mlp": "32"}
    over |= {"model.n_heads": "2", "train.device": "cpu", "train.seed": "3", "probe.progress_keys": keys}
    trainer = Trainer(apply_overrides(RunConfig(), over))
    (probe,) = [p for p in trainer.probes.probes if isinstance(p, ProgressProbe)]
    want: dict[int, dict[str, Any]] = {}
    seen = 0
    for ev in trainer:
        if isinstance(ev, (EvalLogged, CircuitLogged)) and ev.step not in want and probe.next_due > ev.step:
            want[ev.step] = numpy_row(probe)  # the parameters are the measurement's until the next step
        if isinstance(ev, EvalLogged) and ev.step in want:
            for k in ("restricted_loss", "excluded_loss", "key_freqs", "key_share", "gini_E", "rqi", "rqi_shuffled"):
                if k in want[ev.step]:
                    assert_same(ev.row[k], want[ev.step][k], k)
            for k in ("ring_distance", "ring_distance_shuffled", "ring_members"):
                if k in want[ev.step]:
                    assert_same(ev.row[k], want[ev.step][k], k)
        if isinstance(ev, CircuitLogged):
            w = want[ev.step]
            for k in ("shares", "keys", "ring_freq", "x", "y", "distance", "membership"):
                if k in w:
                    assert_same(getattr(ev, k), w[k], k)
            assert ev.keys == tuple(int(k) for k in keys.split(",")) if keys else True
            seen += 1
    assert seen == 4  # steps 0, 20, 40, 60


@pytest.mark.parametrize(("n", "sign"), [(96, 1), (13, -1)])
def test_measures_equal_the_numpy_ones_with_keys_at_the_paper_size(n: int, sign: int) -> None:
    """Keys picked by the threshold (the tiny runs above have none yet): noise plus three planted
    frequencies at the paper's n = 96 (mul mod 97) and an odd n, and a noisy ring in E."""
    from tests.engine import progress_host as progress

    rng = np.random.default_rng(7)
    i, j, c = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    u = i + sign * j - c
    table = rng.normal(size=(n, n, n)) + sum(
        a * np.cos(2 * np.pi * w * u / n) for w, a in {5: 3.0, 2: 2.0, 6: 1.0}.items()
    )
    y = (i[:, :, 0] + sign * j[:, :, 0]) % n
    train = rng.random((n, n)) < 0.3
    got, want = (
        progress.progress_measures(table, y, train, sign),
        numpy_progress.progress_measures(table, y, train, sign),
    )
    assert got.keys == want.keys and len(got.keys) >= 2
    np.testing.assert_allclose(got.shares, want.shares, rtol=REL, atol=ABS)
    for k in ("restricted_loss", "excluded_loss", "full_loss"):
        assert_same(getattr(got, k), getattr(want, k), k)
    theta = 2 * np.pi * 5 * np.arange(n) / n
    E = np.outer(np.cos(theta), rng.normal(size=32)) + np.outer(np.sin(theta), rng.normal(size=32))
    E += 0.1 * rng.normal(size=E.shape)
    r, s = progress.ring(E, 5), numpy_progress.ring(E, 5)
    assert r.rqi > 10 / n and r.rqi == pytest.approx(s.rqi, rel=REL)
    for k in ("x", "y", "distance"):
        np.testing.assert_allclose(getattr(r, k), getattr(s, k), rtol=REL, atol=ABS)
    np.testing.assert_allclose(
        progress.key_energy_share(E, got.keys), numpy_progress.key_energy_share(E, want.keys), rtol=REL, atol=ABS
    )
    assert progress.gini(progress.embedding_norms(E)) == pytest.approx(
        numpy_progress.gini(numpy_progress.embedding_norms(E)), rel=REL
    )


@pytest.mark.parametrize("keys", ["", "2"])
def test_a_measurement_reads_the_device_once(keys: str) -> None:
    """Between the forward pass and the row, nothing waits for the device but one `tolist` of every number
    (engine/train/gpu/hostsync.py counts the calls that would wait on a GPU, on the CPU too)."""
    from engine.train.gpu.hostsync import HostReads

    over = {"data.p": "11", "data.op": "mul", "train.max_steps": "1", "probe.progress_every": "1"}
    trainer = Trainer(apply_overrides(RunConfig(), over | {"train.device": "cpu", "probe.progress_keys": keys}))
    (probe,) = [p for p in trainer.probes.probes if isinstance(p, ProgressProbe)]
    with HostReads() as reads:
        row = probe.measure(0)
    assert dict(reads.counts) == {"tolist": 1}
    assert math.isfinite(row["rqi"]) and row["circuit"].ring_freq >= 1
