"""Progress measures (Nanda et al. 2023) and the embedding ring (Liu et al. 2022), on the group axis.

At each measurement the model's logits on every pair of the group axis (engine/dlog.py) form a table
L[i, j, c] (n × n operand positions, C classes). The task's answer sits at position u = i + s·j, so the
circuit of Nanda et al. §4 lives on the terms cos(wu) and sin(wu): the 2-D Fourier terms (w, s·w) and
(−w, −s·w) of the table over (i, j), per class. Their energy is a share of the table's non-constant energy
(Parseval); they are computed on the table's profile over u (`profile`), n rows instead of n². From these:

- key frequencies: every w whose pair of terms holds at least KEY_FACTOR times the share a frequency
  gets by chance (2 of the n² − 1 non-constant directions), strongest first, at most KEY_MAX of them;
- restricted loss: cross-entropy over all axis pairs of the logits projected onto the constant and the
  key frequencies' terms (every other frequency ablated);
- excluded loss: cross-entropy over the training pairs of the logits with those key terms removed;
- Gini of E's Fourier norms over the axis, the sum of squared weights ‖θ‖², and the ring of E: its rows
  in the plane of the strongest key frequency, the parallelogram share RQI, and each token's share of
  embedding energy in the key frequencies (circuit membership). docs/PROBES.md says where these differ
  from the reference definitions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.func import functional_call

from engine.columns import PROGRESS_COLUMNS
from engine.config import ConfigError
from engine.data import labels, tokens
from engine.dlog import GroupAxis, group_axis
from engine.events import CircuitLogged
from engine.metrics import operand_counts, rare_tokens
from engine.phases import JOIN_SHARE
from engine.probes.base import PROBE_SEED_OFFSET, Blocks, Probe, ProbeContext

KEY_FACTOR = 10.0  # a key frequency holds >= 10× the chance share of non-constant logit energy
KEY_MAX = 8  # at most this many key frequencies (Nanda et al. find 3 to 7)
CHUNK = 8192  # pairs per forward pass


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
    return table[i[None, :], j].mean(1)


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


@dataclass(frozen=True)
class Measures:
    """What `progress_measures` finds in one logit table."""

    shares: np.ndarray  # (⌊n/2⌋,) per-frequency share of non-constant energy
    keys: list[int]
    restricted_loss: float
    excluded_loss: float
    full_loss: float  # the unmodified logits over all axis pairs (the restricted loss's reference)


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
    return np.sqrt((np.abs(np.fft.rfft(E, axis=0)) ** 2).sum(1))[1:]


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


class ProgressProbe(Probe):
    """The progress measures' columns, and CircuitLogged (key-frequency shares, the ring) for the run log."""

    name = "progress"

    def __init__(self, ctx: ProbeContext, blocks: Blocks) -> None:
        cfg = ctx.cfg
        super().__init__(cfg.probe.progress_every)
        self.columns = list(PROGRESS_COLUMNS)
        if not self.enabled:
            return
        self.ctx, self.blocks = ctx, blocks
        self.axis: GroupAxis = group_axis(cfg.data)
        n, order = self.axis.n, self.axis.order
        if any(2 * w > n for w in cfg.probe.fixed_keys):
            raise ConfigError(
                f"probe.progress_keys: frequencies go up to {n // 2} here (got {cfg.probe.progress_keys})"
            )
        i, j = np.meshgrid(order, order, indexing="ij")
        pairs = np.stack([i.ravel(), j.ravel()], 1)  # (n², 2) axis pairs, row-major in (i, j)
        device = next(iter(ctx.params.values())).device
        self.x = torch.as_tensor(tokens(cfg.data, pairs), device=device)
        self.y = labels(cfg.data, pairs).reshape(n, n)
        x_train = ctx.x_train.cpu().numpy()
        b_col = 2 if cfg.data.format == "a_op_b_eq" else 1
        pos = self.axis.position
        a, b = pos[x_train[:, 0]], pos[x_train[:, b_col]]
        on = (a >= 0) & (b >= 0)
        self.train = np.zeros((n, n), dtype=bool)
        self.train[a[on], b[on]] = True
        train_pairs = np.stack([x_train[:, 0], x_train[:, b_col]], 1)
        self.rare = {int(t) for t in rare_tokens(operand_counts(train_pairs, cfg.data.p), cfg.probe.rare_k)}
        self.buffers = dict(ctx.model.named_buffers())

    @torch.no_grad()
    def logit_table(self) -> np.ndarray:
        """The model's logits on every axis pair, (n, n, C) float64."""
        params = {**self.ctx.params, **self.buffers}
        out = [functional_call(self.ctx.model, params, (self.x[k : k + CHUNK],)) for k in range(0, len(self.x), CHUNK)]
        n = self.axis.n
        return torch.cat(out).double().cpu().numpy().reshape(n, n, -1)

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        m = progress_measures(self.logit_table(), self.y, self.train, self.axis.sign, self.ctx.cfg.probe.fixed_keys)
        weight_sq = float(sum(p.detach().double().pow(2).sum() for p in self.ctx.params.values()))
        out: dict[str, Any] = {
            "restricted_loss": m.restricted_loss,
            "excluded_loss": m.excluded_loss,
            "key_freqs": len(m.keys),
            "key_share": float(sum(m.shares[w - 1] for w in m.keys)),
            "weight_sq": weight_sq,
        }
        ring_part: dict[str, Any] = {"ring_freq": 0, "tokens": (), "x": (), "y": (), "distance": (), "membership": ()}
        if self.blocks.e_names:
            E = self.blocks.embedding.double().cpu().numpy()[self.axis.order]  # operand rows in axis order
            norms = embedding_norms(E)
            n = self.axis.n
            ring_freqs = [w for w in m.keys if 2 * w < n] or [int(np.argmax(norms[: (n - 1) // 2])) + 1]
            r = ring(E, ring_freqs[0])
            base = ring(shuffled(E, self.ctx.cfg.train.seed + PROBE_SEED_OFFSET), ring_freqs[0])
            share = key_energy_share(E, m.keys)
            out.update(
                gini_E=gini(norms),
                rqi=r.rqi,
                rqi_shuffled=base.rqi,
                ring_distance=float(np.median(r.distance)),
                ring_distance_shuffled=float(np.median(base.distance)),
                ring_members=int((share >= JOIN_SHARE).sum()),
            )
            ring_part = {
                "ring_freq": r.freq,
                "tokens": tuple(int(t) for t in self.axis.order),
                "x": tuple(float(v) for v in r.x),
                "y": tuple(float(v) for v in r.y),
                "distance": tuple(float(v) for v in r.distance),
                "membership": tuple(float(v) for v in share),
                "rare": tuple(int(t) in self.rare for t in self.axis.order),
            }
        out["circuit"] = CircuitLogged(
            step=step, shares=tuple(float(s) for s in m.shares), keys=tuple(m.keys), **ring_part
        )
        return out
