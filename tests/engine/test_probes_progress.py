"""The progress probe (engine/probes/progress.py): each measure against an exact answer computed another way."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from engine.config import ConfigError, DataConfig, RunConfig, apply_overrides
from engine.probes.progress import KEY_FACTOR, chance_share
from engine.rundir.probe_logs import join_steps
from engine.task.data import labels, operand_pairs
from engine.task.dlog import dlog_order, group_axis
from engine.train.phases import CircuitPhases, circuit_phases_from_rows
from tests.engine.progress_host import (
    answer_positions,
    cross_entropy,
    embedding_norms,
    frequency_shares,
    gini,
    key_energy_share,
    key_frequencies,
    parallelogram_share,
    profile,
    progress_measures,
    restrict,
    ring,
    shuffled,
)

P = 13


def wave_table(n: int, sign: int, freqs: dict[int, float], phase: float = 0.0) -> np.ndarray:
    """L[i, j, c] = Σ_w α_w cos(2πw(i + s·j − c)/n + φ): exactly a sum of a few (i + s·j) frequencies.

    The classes c run over the axis positions, so the argmax is the answer i + s·j (mod n)."""
    i, j, c = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    u = i + sign * j - c
    table = np.zeros(u.shape)
    for w, a in freqs.items():
        table += a * np.cos(2 * np.pi * w * u / n + phase)
    return table


def answers(n: int, sign: int) -> np.ndarray:
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return (i + sign * j) % n


@pytest.mark.parametrize("sign", [1, -1])
def test_sum_of_key_frequencies_restricts_to_itself_and_excludes_to_chance(sign: int) -> None:
    n = P
    table = wave_table(n, sign, {2: 3.0, 5: 2.0})
    y = answers(n, sign)
    train = np.random.default_rng(0).random((n, n)) < 0.4
    m = progress_measures(table, y, train, sign)
    assert sorted(m.keys) == [2, 5]
    assert m.restricted_loss == pytest.approx(m.full_loss, abs=1e-9)
    assert m.full_loss < 0.5 * math.log(n)  # the table predicts the answers: not a trivial equality
    # every class's non-constant part is key: what remains is a constant, the uniform distribution
    assert m.excluded_loss == pytest.approx(math.log(n), abs=1e-9)
    assert m.shares[1] + m.shares[4] == pytest.approx(1.0, abs=1e-12)


def test_random_logits_have_no_key_frequency() -> None:
    rng = np.random.default_rng(1)
    for n in (13, 31, 96):
        table = rng.normal(size=(n, n, n))
        shares = frequency_shares(table, 1)
        threshold = KEY_FACTOR * chance_share(n)
        assert shares.max() < threshold, (n, shares.max(), threshold)
        assert key_frequencies(shares, n) == []
        m = progress_measures(table, answers(n, 1), np.ones((n, n), bool), 1)
        # nothing key: the restricted logits are each class's mean, the excluded ones the logits themselves
        assert m.excluded_loss == pytest.approx(cross_entropy(table.reshape(-1, n), answers(n, 1).ravel()))


@pytest.mark.parametrize(("n", "sign"), [(13, 1), (12, -1), (12, 1)])
def test_projection_matches_least_squares(n: int, sign: int) -> None:
    """The FFT projection equals a brute-force least-squares fit on [1, cos w(i+sj), sin w(i+sj)] per class
    (n = 12 holds the Nyquist frequency 6, whose sine vanishes on the grid)."""
    rng = np.random.default_rng(2)
    table = rng.normal(size=(n, n, 5))
    keys = [1, 3, n // 2]
    restricted = restrict(profile(table, sign), keys)[answer_positions(n, sign)]  # (n, n, 5)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    u = (i + sign * j).ravel()
    cols = [np.ones(n * n)]
    for w in keys:
        cols += [np.cos(2 * np.pi * w * u / n), np.sin(2 * np.pi * w * u / n)]
    X = np.stack(cols, 1)
    coef = np.linalg.lstsq(X, table.reshape(n * n, -1), rcond=None)[0]
    np.testing.assert_allclose(restricted.reshape(n * n, -1), X @ coef, atol=1e-10)


@pytest.mark.parametrize(("n", "sign"), [(11, 1), (12, -1)])
def test_shares_are_the_2d_fourier_diagonal_and_the_fit_energy(n: int, sign: int) -> None:
    """A frequency's share is the energy of its 2-D DFT terms (w, s·w), (−w, −s·w) over (i, j), and the
    energy of its least-squares part, each over the table's non-constant energy."""
    rng = np.random.default_rng(3)
    table = rng.normal(size=(n, n, 4))
    shares = frequency_shares(table, sign)
    F = np.abs(np.fft.fft2(table, axes=(0, 1), norm="ortho")) ** 2
    centred = table - table.mean((0, 1))
    total = (centred**2).sum()
    for w in range(1, n // 2 + 1):
        cells = {(w % n, (sign * w) % n), ((-w) % n, (-sign * w) % n)}
        assert shares[w - 1] == pytest.approx(sum(F[c].sum() for c in cells) / total, rel=1e-10)
        part = restrict(profile(table, sign), [w])[answer_positions(n, sign)] - table.mean((0, 1))
        assert shares[w - 1] == pytest.approx((part**2).sum() / total, rel=1e-10)


@pytest.mark.parametrize("op", ["mul", "div"])
def test_dlog_axis_turns_mul_into_addition(op: str) -> None:
    for p in (7, 13, 97):
        cfg = DataConfig(op=op, p=p)
        ax = group_axis(cfg)
        n = p - 1
        assert ax.n == n and sorted(ax.order.tolist()) == list(range(1, p))
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        pairs = np.stack([ax.order[i.ravel()], ax.order[j.ravel()]], 1)
        got = labels(cfg, pairs)
        want = ax.order[(i.ravel() + ax.sign * j.ravel()) % n]
        np.testing.assert_array_equal(got, want)
        assert ax.position[0] == -1  # 0 has no logarithm: off the axis
    assert dlog_order(7).tolist() == [1, 3, 2, 6, 4, 5]  # 3 is the smallest primitive root mod 7


def test_add_axis_is_the_tokens_and_poly_has_none() -> None:
    ax = group_axis(DataConfig(op="sub", p=11))
    assert ax.order.tolist() == list(range(11)) and ax.sign == -1
    with pytest.raises(ConfigError, match="not a group operation"):
        group_axis(DataConfig(op="poly", p=11))


def test_ring_of_an_ideal_embedding() -> None:
    n, d, w = 16, 8, 3
    rng = np.random.default_rng(4)
    theta = 2 * np.pi * w * np.arange(n) / n
    A, B, mean = rng.normal(size=d), rng.normal(size=d), rng.normal(size=d)
    E = mean + np.outer(np.cos(theta), A) + np.outer(np.sin(theta), B)
    r = ring(E, w)
    np.testing.assert_allclose(r.x, np.cos(theta), atol=1e-10)
    np.testing.assert_allclose(r.distance, 0, atol=1e-9)
    assert r.rqi == pytest.approx(1.0)
    np.testing.assert_allclose(key_energy_share(E, [w]), 1.0)
    assert key_energy_share(E, [w + 1]).max() < 1e-12
    norms = embedding_norms(E)
    assert int(np.argmax(norms)) + 1 == w
    assert gini(norms) == pytest.approx(1 - 1 / len(norms))  # one frequency holds everything


def test_random_embedding_is_not_a_ring() -> None:
    n = 61
    E = np.random.default_rng(5).normal(size=(n, 32))
    r = ring(E, 4)
    assert r.rqi < 5 / n  # chance is about 1/n
    assert np.median(r.distance) > 0.9  # left out, a random row sits near the centre: distance about 1
    assert key_energy_share(E, [4]).max() < 0.5
    assert gini(embedding_norms(E)) < 0.3


def test_parallelogram_share_counts_closed_phases() -> None:
    n = 7
    exact = 2 * np.pi * np.arange(n) / n
    assert parallelogram_share(exact) == pytest.approx(1.0)
    bent = exact.copy()
    bent[0] += np.pi / 2  # every parallelogram holding token 0 an odd number of times opens
    assert 0 < parallelogram_share(bent) < 1


def test_gini_edges() -> None:
    assert gini(np.ones(10)) == pytest.approx(0.0)
    assert gini(np.array([0, 0, 0, 1.0])) == pytest.approx(0.75)
    assert math.isnan(gini(np.zeros(3)))


def test_circuit_phases_rule() -> None:
    chance = math.log(97)
    # memorized at 100; restricted under half of chance at 300; after that ‖θ‖² falls
    # by 0.7 (to 400), 1.5 (to 500: the fastest), then 0.5: the fall slowed, cleanup is 500
    table = [(0.1, 4.6, 4.6, 20.0), (1.0, 4.5, 6.0, 19.0), (1.0, 3.0, 6.5, 18.5), (1.0, 1.5, 6.0, 18.2)]
    table += [(1.0, 1.0, 5.0, 17.5), (1.0, 0.5, 1.0, 16.0), (1.0, 0.1, 0.2, 15.5), (1.0, 0.1, 0.2, 15.3)]
    rows = [
        {"step": k * 100, "train_acc": acc, "val_acc": 0.0, "train_loss": 0.1, "restricted_loss": r}
        | {"val_loss": test, "weight_sq": w, "key_share": 0.9}
        for k, (acc, r, test, w) in enumerate(table)
    ]
    assert 1.5 * 2 < chance < 3.0 * 2
    ph = circuit_phases_from_rows(rows, 97)
    assert ph["memorized_step"] == 100 and ph["circuit_step"] == 300 and ph["cleanup_step"] == 500
    unconfirmed = circuit_phases_from_rows(rows[:6], 97)  # the fall has not slowed yet
    assert unconfirmed["circuit_step"] == 300 and unconfirmed["cleanup_step"] is None
    live = CircuitPhases(97)
    live.observe(0, {"restricted_loss": 0.1, "val_loss": 9.0, "weight_sq": 1.0, "key_share": 0.9}, None)
    assert live.circuit_step is None  # not before memorization
    weak = [r | {"key_share": 0.3} for r in rows]  # the keys carry too little of the logits' energy
    assert circuit_phases_from_rows(weak, 97)["circuit_step"] is None


def test_a_lookup_table_has_no_circuit() -> None:
    """Logits α·δ(c = answer), no Fourier circuit at all: every frequency passes the key threshold, the cap
    picks 8, and at α = 20 their restricted loss is below ln(C)/2. The key-share condition keeps C off."""
    p = 97
    cfg = DataConfig(p=p, op="mul")
    axis = group_axis(cfg)
    n = axis.n
    i, j = np.meshgrid(axis.order, axis.order, indexing="ij")
    y = labels(cfg, np.stack([i.ravel(), j.ravel()], 1)).reshape(n, n)
    table = 20.0 * (np.arange(p)[None, None, :] == y[:, :, None])  # (n, n, C): the answer's logit is 20
    m = progress_measures(table, y, np.ones((n, n), dtype=bool), axis.sign)
    assert len(m.keys) == 8 and m.restricted_loss < math.log(p) / 2  # the loss rule alone would fire
    share = float(sum(m.shares[w - 1] for w in m.keys))
    assert share < 0.5
    row = {"step": 100, "train_acc": 1.0, "val_acc": 1.0, "train_loss": 0.0, "weight_sq": 1.0}
    rows = [row | {"step": 0}, row | {"restricted_loss": m.restricted_loss, "key_share": share}]
    assert circuit_phases_from_rows(rows, p)["circuit_step"] is None


def test_fixed_keys_are_used_as_given() -> None:
    n, sign = 13, 1
    table = wave_table(n, sign, {2: 3.0, 5: 2.0})
    free = progress_measures(table, answers(n, sign), np.ones((n, n), dtype=bool), sign)
    fixed = progress_measures(table, answers(n, sign), np.ones((n, n), dtype=bool), sign, [2])
    assert sorted(free.keys) == [2, 5] and fixed.keys == [2]
    assert fixed.restricted_loss > free.restricted_loss  # frequency 5 ablated


def test_join_steps_need_to_stay() -> None:
    rows = [
        {"step": str(s), "token": str(t), "membership": str(v)}
        for s, vals in [(0, (0.1, 0.6, 0.1)), (100, (0.7, 0.4, 0.1)), (200, (0.8, 0.9, 0.2))]
        for t, v in enumerate(vals)
    ]
    assert join_steps(rows) == {0: 100, 1: 200, 2: None}


def progress_run(out: Path) -> Path:
    """A finished tiny mul run (p = 11, 60 steps) with the progress probe at every evaluation; its directory."""
    from engine.train.run import Run

    cfg = apply_overrides(
        RunConfig(),
        {"data.p": "11", "data.op": "mul", "train.max_steps": "60", "train.eval_every": "20", "train.seed": "3"}
        | {"probe.progress_every": "20", "model.d_embed": "16", "model.d_hidden": "32", "train.device": "cpu"},
    )
    run = Run(cfg, out=out)
    for _ in run.events():
        pass
    return run.dir


def test_probe_on_a_tiny_run(tmp_path) -> None:
    """A real run writes the columns, keyfreq.csv, ring.csv and joins.csv, with token 0 off the mul axis."""
    from engine.rundir import read_config, read_csv, read_summary

    d = progress_run(tmp_path)
    rows = read_csv(d / "metrics.csv")
    assert len(rows) == 4 and all(r["restricted_loss"] and r["rqi"] for r in rows)
    assert float(rows[0]["weight_sq"]) > 0
    freqs = read_csv(d / "keyfreq.csv")
    assert {r["freq"] for r in freqs} == {str(k) for k in range(1, 6)}  # n = 10: frequencies 1..5
    ring_rows = read_csv(d / "ring.csv")
    assert len(ring_rows) == 4 * 10 and "0" not in {r["token"] for r in ring_rows}
    joins = read_csv(d / "joins.csv")
    assert len(joins) == 10
    cfg = read_config(d)
    rare = {int(t) for t in read_summary(d).rare_tokens or []} - {0}  # token 0 is off the mul axis
    assert rare and {int(r["token"]) for r in joins if r["rare"] == "1"} == rare  # the engine's rare set
    pairs = operand_pairs(cfg.data)
    assert len(pairs) == 121


@pytest.mark.parametrize(("kind", "op"), [("transformer", "add"), ("mlp_onehot", "div")])
def test_probe_on_other_models(tmp_path, kind: str, op: str) -> None:
    """The transformer gets the same measures; a model without E gets the logit measures and no ring."""
    from engine.train.trainer import Trainer

    overrides = {"data.p": "11", "data.op": op, "model.kind": kind, "model.d_embed": "16", "model.n_heads": "2"}
    overrides |= {"model.d_mlp": "32", "train.max_steps": "20", "train.eval_every": "10", "train.device": "cpu"}
    cfg = apply_overrides(RunConfig(), overrides | {"probe.progress_every": "10"})
    from engine.events import CircuitLogged, EvalLogged

    evs = list(Trainer(cfg))
    rows = [e.row for e in evs if isinstance(e, EvalLogged)]
    circuits = [e for e in evs if isinstance(e, CircuitLogged)]
    assert len(rows) == 3 and all(math.isfinite(r["restricted_loss"]) for r in rows)
    n = 11 if op == "add" else 10
    assert len(circuits) == 3 and all(len(c.shares) == n // 2 for c in circuits)
    has_e = kind == "transformer"
    assert all(len(c.tokens) == (n if has_e else 0) for c in circuits)
    assert all(math.isfinite(r["rqi"]) == has_e for r in rows)


@pytest.mark.parametrize("d", [64, 128])
def test_shuffled_and_random_rings_sit_at_chance(d: int) -> None:
    """RQI's chance level is 1/n once each row is left out of its own ring fit (it was 2.3-2.8/n at d = 64-128
    with the row in: projected onto coefficients it helped compute). Both baselines: a random E, and an ideal
    ring with its rows shuffled (the shuffled-E column), averaged over seeds."""
    n, w = 48, 5
    theta = 2 * np.pi * w * np.arange(n) / n
    rqis, shuffled_rqis = [], []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        rqis.append(ring(rng.normal(size=(n, d)), w).rqi)
        A, B = rng.normal(size=(2, d))
        ideal = np.outer(np.cos(theta), A) + np.outer(np.sin(theta), B) + 0.1 * rng.normal(size=(n, d))
        assert ring(ideal, w).rqi > 0.5
        shuffled_rqis.append(ring(shuffled(ideal, seed), w).rqi)
    assert np.mean(rqis) * n == pytest.approx(1.0, abs=0.5)
    assert np.mean(shuffled_rqis) * n == pytest.approx(1.0, abs=0.5)
