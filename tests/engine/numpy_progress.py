"""The progress probe's arithmetic in numpy float64 as it was before it moved to torch (engine/probes/progress.py
at the commit before the port), frozen: the reference the device version is checked against
(tests/engine/test_probes_progress_device.py). Not used by the engine."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tests.engine.progress_host import Measures  # the same record: the frozen copy fills it as the old code did

KEY_FACTOR = 10.0
KEY_MAX = 8
JOIN_SHARE = 0.5


def chance_share(n: int) -> float:
    """The share of non-constant energy one frequency's cos/sin pair holds in an n × n table of noise."""
    return 2.0 / (n * n - 1)


def answer_positions(n: int, sign: int) -> np.ndarray:
    """(n, n) u = i + s·j mod n: the answer's axis position of each pair."""
    i = np.arange(n)
    return (i[:, None] + sign * i[None, :]) % n


def profile(table: np.ndarray, sign: int) -> np.ndarray:
    """(n, C) f[u] = the mean of the (n, n, C) table over the n pairs whose answer sits at u.

    The functions of u = i + s·j are a subspace of the n × n tables; f is the table's orthogonal projection
    onto it, and cos/sin(2πw·u/n) are exactly the 2-D Fourier terms (w, s·w), (−w, −s·w) (Nanda et al.'s
    cos(w(a+b)), sin(w(a+b)) directions)."""
    n = table.shape[0]
    i = np.arange(n)
    j = (sign * (i[:, None] - i[None, :])) % n  # (u, i): the j with i + s·j ≡ u
    return np.asarray(table[i[None, :], j].mean(1))


def frequency_shares(table: np.ndarray, sign: int) -> np.ndarray:
    """Share of the non-constant energy on each frequency's (i + s·j) terms, w = 1..⌊n/2⌋ (index w-1)."""
    n = table.shape[0]
    total = ((table - table.mean((0, 1))) ** 2).sum()
    F = np.abs(np.fft.fft(profile(table, sign), axis=0)) ** 2  # Σ_u f_w(u)² = (|F_w|² + |F_-w|²)/n (Parseval)
    w = np.arange(1, n // 2 + 1)
    energy = F[w].sum(1) + np.where(2 * w == n, 0.0, F[(n - w) % n].sum(1))  # Nyquist (n even): one term
    return energy / total if total > 0 else np.zeros(len(w))


def key_frequencies(shares: np.ndarray, n: int) -> list[int]:
    """Frequencies (1-based) with share >= KEY_FACTOR × chance, strongest first, at most KEY_MAX."""
    threshold = KEY_FACTOR * chance_share(n)
    order = np.argsort(-shares, kind="stable")
    return [int(k) + 1 for k in order if shares[k] >= threshold][:KEY_MAX]


def restrict(f: np.ndarray, keys: list[int]) -> np.ndarray:
    """A profile f (n, C) projected onto the constant and the key frequencies (over u)."""
    n = f.shape[0]
    F = np.fft.fft(f, axis=0)
    G = np.zeros_like(F)
    for k in {0, *(w % n for w in keys), *((-w) % n for w in keys)}:
        G[k] = F[k]
    return np.fft.ifft(G, axis=0).real


def cross_entropy(logits: np.ndarray, y: np.ndarray) -> float:
    """Mean cross-entropy (nats) of (N, C) float64 logits against (N,) labels; NaN for no rows."""
    if len(y) == 0:
        return math.nan
    z = logits - logits.max(1, keepdims=True)
    lse = np.log(np.exp(z).sum(1))
    return float((lse - z[np.arange(len(y)), y]).mean())


def progress_measures(
    table: np.ndarray, y: np.ndarray, train: np.ndarray, sign: int, fixed: list[int] | None = None
) -> Measures:
    """Key frequencies, restricted and excluded loss of an (n, n, C) logit table with (n, n) labels and a
    (n, n) bool mask of training pairs (Nanda et al. 2023, §5.1).

    The restricted logits of pair (i, j) are f_R[u], f_R the key part (and the constant) of the profile;
    the excluded ones are the logits minus that key part. Both are computed on the profile's n rows.
    `fixed` holds the keys constant (Nanda et al. pick them once, from the trained model)."""
    n, C = table.shape[0], table.shape[2]
    shares = frequency_shares(table, sign)
    keys = list(fixed) if fixed else key_frequencies(shares, n)
    f_r = restrict(profile(table, sign), keys)  # (n, C): the restricted logits, one row per answer position
    u = answer_positions(n, sign)
    key_part = f_r - table.mean((0, 1))  # what the excluded logits lose
    return Measures(
        shares,
        keys,
        cross_entropy(f_r[u].reshape(-1, C), y.reshape(-1)),
        cross_entropy(table[train] - key_part[u[train]], y[train]),
        cross_entropy(table.reshape(-1, C), y.reshape(-1)),
    )


def gini(x: np.ndarray) -> float:
    """Gini coefficient of non-negative values: 0 = all equal, → 1 = one holds everything."""
    s = np.sort(x)
    m, total = len(s), s.sum()
    if m == 0 or total <= 0:
        return math.nan
    return float(((2 * np.arange(1, m + 1) - m - 1) * s).sum() / (m * total))


def embedding_norms(E: np.ndarray) -> np.ndarray:
    """‖DFT of E over the axis rows‖₂ over the embedding axis, w = 1..⌊n/2⌋ (the constant left out)."""
    return np.asarray(np.sqrt((np.abs(np.fft.rfft(E, axis=0)) ** 2).sum(1))[1:])


@dataclass(frozen=True)
class Ring:
    """E's rows in the plane of one frequency w, and how close each is to the ideal ring."""

    freq: int
    x: np.ndarray  # (n,) coordinates of E_t in the plane of the ring fitted to the other rows (leave-one-out)
    y: np.ndarray
    distance: np.ndarray  # (n,) ‖(x_t, y_t) − (cos 2πwt/n, sin 2πwt/n)‖: 0 on the ideal ring
    rqi: float


def ring(E: np.ndarray, w: int) -> Ring:
    """E (n, d), rows in axis order, in the plane of frequency w (1 <= w < n/2), each row left out.

    For each token t the ring c + A cos θ + B sin θ (θ_s = 2πws/n) is fitted by least squares to the OTHER
    rows, and (x_t, y_t) solve E_t − c ≈ x_t·A + y_t·B. An ideal ring lands exactly on the unit circle at
    θ_t either way; leaving the row out keeps a row from being projected onto coefficients it helped
    compute, which put a random row at distance 0.6–0.75 (not about 1) and lifted RQI's chance level to
    2.3–2.8/n at d = 64–128 (issue 33). With the row left out a random E scores about 1/n.
    """
    n = E.shape[0]
    theta = 2 * np.pi * w * np.arange(n) / n
    X = np.stack([np.ones(n), np.cos(theta), np.sin(theta)], 1)  # (n, 3)
    # Least squares without row t by a rank-one downdate of the normal equations, for every t at once.
    G = X.T @ X - X[:, :, None] * X[:, None, :]  # (n, 3, 3): XᵀX without row t
    XtE = X.T @ E  # (3, d)
    coef = np.linalg.solve(G, XtE[None] - X[:, :, None] * E[:, None, :])  # (n, 3, d): c, A, B without row t
    AB = coef[:, 1:]  # (n, 2, d)
    rhs = np.einsum("tkd,td->tk", AB, E - coef[:, 0])  # (n, 2)
    xy = np.linalg.solve(AB @ AB.transpose(0, 2, 1), rhs[:, :, None])[:, :, 0]  # E_t − c_t ≈ x A_t + y B_t
    x, y = xy[:, 0], xy[:, 1]
    distance = np.hypot(x - np.cos(theta), y - np.sin(theta))
    return Ring(w, x, y, distance, parallelogram_share(np.arctan2(y, x)))


def shuffled(E: np.ndarray, seed: int) -> np.ndarray:
    """E's rows in a fixed random order: the shuffled-E baseline, the same norms and spectrum of row norms
    with the tokens' places on the axis destroyed. Its RQI sits at chance, about 1/n."""
    return E[np.random.default_rng(seed).permutation(E.shape[0])]


def parallelogram_share(phase: np.ndarray) -> float:
    """RQI on a ring: the share of modular parallelograms (i, j, m, k), i + j ≡ m + k (mod n), {m, k} ≠ {i, j},
    whose phases close, |φ_i + φ_j − φ_m − φ_k| < π/n (mod 2π): half the spacing of the ideal ring.
    Liu et al. (2022) count E_i + E_j ≈ E_m + E_k on a line; on a ring the parallelogram closes in phase.
    The swapped pair (m, k) = (j, i) closes for any phases and is left out, so uniform random phases score
    1/n (with it in, 2/n)."""
    n = len(phase)
    i = np.arange(n)
    pair = phase[i[None, :]] + phase[(i[:, None] - i[None, :]) % n]  # (r, i): φ_i + φ_(r-i)
    diff = pair[:, :, None] - pair[:, None, :]  # (r, i, m)
    close = np.abs((diff + np.pi) % (2 * np.pi) - np.pi) < np.pi / n
    # (i, j) itself (m = i) and its swap (m = j) close for any phases: n² + n² − n entries of (r, i, m),
    # n of them where i = j (2i ≡ r); they are not parallelograms.
    trivial = 2 * n * n - n
    return float((close.sum() - trivial) / (n**3 - trivial))


def key_energy_share(E: np.ndarray, keys: list[int]) -> np.ndarray:
    """Per row of E (n, d): the share of its centred energy on the key frequencies' cos/sin (over the axis)."""
    n = E.shape[0]
    centred = E - E.mean(0)
    F = np.fft.fft(centred, axis=0)
    G = np.zeros_like(F)
    for w in keys:
        for k in {w % n, (-w) % n}:
            G[k] = F[k]
    part = np.fft.ifft(G, axis=0).real
    total = (centred**2).sum(1)
    resid = ((centred - part) ** 2).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, 1 - resid / total, 0.0)
    return np.clip(share, 0.0, 1.0)


def measure_row(
    table: np.ndarray, y: np.ndarray, train: np.ndarray, sign: int, fixed: list[int], E: np.ndarray | None, seed: int
) -> dict[str, Any]:
    """The probe's columns and circuit as the old `ProgressProbe.measure` computed them from its logit table,
    labels, training mask and E's rows in axis order (seed: the shuffled baseline's)."""
    m = progress_measures(table, y, train, sign, fixed)
    out: dict[str, Any] = {
        "restricted_loss": m.restricted_loss,
        "excluded_loss": m.excluded_loss,
        "key_freqs": len(m.keys),
        "key_share": float(sum(m.shares[w - 1] for w in m.keys)),
        "shares": tuple(float(s) for s in m.shares),
        "keys": tuple(m.keys),
    }
    if E is not None:
        norms = embedding_norms(E)
        n = E.shape[0]
        ring_freqs = [w for w in m.keys if 2 * w < n] or [int(np.argmax(norms[: (n - 1) // 2])) + 1]
        r = ring(E, ring_freqs[0])
        base = ring(shuffled(E, seed), ring_freqs[0])
        share = key_energy_share(E, m.keys)
        out.update(
            gini_E=gini(norms),
            rqi=r.rqi,
            rqi_shuffled=base.rqi,
            ring_distance=float(np.median(r.distance)),
            ring_distance_shuffled=float(np.median(base.distance)),
            ring_members=int((share >= JOIN_SHARE).sum()),
            ring_freq=r.freq,
            x=tuple(float(v) for v in r.x),
            y=tuple(float(v) for v in r.y),
            distance=tuple(float(v) for v in r.distance),
            membership=tuple(float(v) for v in share),
        )
    return out
