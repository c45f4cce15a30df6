"""Progress measures (Nanda et al. 2023) and the embedding ring (Liu et al. 2022), on the group axis.

At each measurement the model's logits on every pair of the group axis (engine/task/dlog.py) form a table
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

Everything is computed in float64 torch where the model lives (the run's CPU or GPU), with the keys
picked on the device as a mask (no host decision between the forward pass and the last measure), and
the probe reads its results to the host once per measurement. The array functions take tensors and give
tensors on the same device; the tests check them against answers computed another way
(tests/engine/progress_host.py runs them on numpy arrays).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.func import functional_call

from engine.config import ConfigError
from engine.events import JOIN_SHARE, CircuitLogged
from engine.probes.base import PROBE_SEED_OFFSET, Blocks, Probe, ProbeContext
from engine.rundir import PROGRESS_COLUMNS
from engine.task.data import labels, tokens
from engine.task.dlog import GroupAxis, group_axis
from engine.task.metrics import operand_counts, rare_tokens

KEY_FACTOR = 10.0  # a key frequency holds >= 10× the chance share of non-constant logit energy
KEY_MAX = 8  # at most this many key frequencies (Nanda et al. find 3 to 7)
CHUNK = 8192  # pairs per forward pass
F64 = torch.float64


def chance_share(n: int) -> float:
    """The share of non-constant energy one frequency's cos/sin pair holds in an n × n table of noise."""
    return 2.0 / (n * n - 1)


def answer_positions(n: int, sign: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(n, n) u = i + s·j mod n: the answer's axis position of each pair."""
    i = torch.arange(n, device=device)
    return (i[:, None] + sign * i[None, :]) % n


def profile(table: torch.Tensor, sign: int) -> torch.Tensor:
    """(n, C) f[u] = the mean of the (n, n, C) table over the n pairs whose answer sits at u.

    The functions of u = i + s·j are a subspace of the n × n tables; f is the table's orthogonal projection
    onto it, and cos/sin(2πw·u/n) are exactly the 2-D Fourier terms (w, s·w), (−w, −s·w) (Nanda et al.'s
    cos(w(a+b)), sin(w(a+b)) directions)."""
    n = table.shape[0]
    i = torch.arange(n, device=table.device)
    j = (sign * (i[:, None] - i[None, :])) % n  # (u, i): the j with i + s·j ≡ u
    pairs = (i[None, :] * n + j).reshape(-1)  # (n²,) row-major index of pair (i, j) in the (n², C) table
    return table.reshape(n * n, -1).index_select(0, pairs).reshape(n, n, -1).mean(1)  # (u, i, C) -> (u, C)


def key_candidates(shares: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The KEY_MAX strongest frequencies (1-based, strongest first, ties in frequency order) and which of
    them pass KEY_FACTOR × chance: the passing ones lead, so the keys are `w[valid]`. On the device."""
    order = torch.argsort(-shares, stable=True)[:KEY_MAX]
    return order + 1, shares[order] >= KEY_FACTOR * chance_share(n)


def frequency_mask(n: int, w: torch.Tensor, valid: torch.Tensor, constant: bool) -> torch.Tensor:
    """(n,) bool: the DFT rows of the valid frequencies w and −w (mod n), and row 0 if `constant`."""
    k = torch.arange(n, device=w.device)[:, None]  # (n, 1) against the (1, keys) candidates: no scatter
    hits = (((k == w % n) | (k == (-w) % n)) & valid).any(1)
    return hits | (k[:, 0] == 0) if constant else hits


def _keys_tensor(keys: list[int], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    w = torch.tensor(keys, dtype=torch.long, device=device)
    return w, torch.ones_like(w, dtype=torch.bool)


def restrict_to(f: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """A profile f (n, C) with every DFT row (over u) outside `mask` ablated."""
    F = torch.fft.fft(f, dim=0)
    kept: torch.Tensor = torch.fft.ifft(torch.where(mask[:, None], F, 0), dim=0).real
    return kept


def row_losses(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """(N,) cross-entropy (nats) of each row of (N, C) float64 logits against (N,) labels."""
    z = logits - logits.amax(1, keepdim=True)
    lse = torch.log(torch.exp(z).sum(1))
    return lse - z.gather(1, y[:, None])[:, 0]


def _shares_of_profile(f: torch.Tensor, total: torch.Tensor) -> torch.Tensor:
    """Share of the non-constant energy on each frequency's (i + s·j) terms, w = 1..⌊n/2⌋ (index w-1), from
    the table's profile f (n, C) and its non-constant energy `total`."""
    n = f.shape[0]
    F = torch.fft.fft(f, dim=0).abs() ** 2  # Σ_u f_w(u)² = (|F_w|² + |F_-w|²)/n (Parseval)
    w = torch.arange(1, n // 2 + 1, device=f.device)
    mirror = torch.where(2 * w == n, 0.0, F[(n - w) % n].sum(1))  # Nyquist (n even): one term
    return torch.where(total > 0, (F[w].sum(1) + mirror) / total, 0.0)


@dataclass(frozen=True)
class LogitMeasures:
    """What `logit_measures` finds in one logit table: tensors on the table's device."""

    shares: torch.Tensor  # (⌊n/2⌋,) per-frequency share of non-constant energy
    w: torch.Tensor  # (k,) candidate key frequencies (1-based), strongest first
    valid: torch.Tensor  # (k,) bool, which candidates are keys: a leading run, so the keys are w[valid]
    restricted_loss: torch.Tensor  # 0-d
    excluded_loss: torch.Tensor  # 0-d, NaN for no training pair on the axis

    @property
    def key_share(self) -> torch.Tensor:
        """The key frequencies' summed share (0-d)."""
        return torch.where(self.valid, self.shares[self.w - 1], 0.0).sum()


def logit_measures(
    table: torch.Tensor, y: torch.Tensor, train_idx: torch.Tensor, sign: int, fixed: list[int] | None = None
) -> LogitMeasures:
    """Key frequencies, restricted and excluded loss of an (n, n, C) float64 logit table with (n, n) labels
    and the flat (row-major) indices of the training pairs (Nanda et al. 2023, §5.1), without a host read.

    The restricted logits of pair (i, j) are f_R[u], f_R the key part (and the constant) of the profile;
    the excluded ones are the logits minus that key part. Both are computed on the profile's n rows.
    `fixed` holds the keys constant (Nanda et al. pick them once, from the trained model)."""
    n, C = table.shape[0], table.shape[2]
    mean = table.mean((0, 1))
    f = profile(table, sign)
    shares = _shares_of_profile(f, ((table - mean) ** 2).sum())
    w, valid = _keys_tensor(list(fixed), table.device) if fixed else key_candidates(shares, n)
    f_r = restrict_to(f, frequency_mask(n, w, valid, constant=True))  # (n, C): one row per answer position
    u = answer_positions(n, sign, table.device).reshape(-1)  # (n²,) row-major in (i, j)
    flat, labels_ = table.reshape(-1, C), y.reshape(-1)
    key_part = f_r - mean  # what the excluded logits lose
    excluded = row_losses(flat[train_idx] - key_part[u[train_idx]], labels_[train_idx])
    # The restricted logits of a pair are row u of f_r: each row's log-softmax once (n rows), then one
    # number per pair, not an (n², C) table (the same per-pair losses as row_losses(f_r[u], labels)).
    z = f_r - f_r.amax(1, keepdim=True)
    restricted = torch.log(torch.exp(z).sum(1))[u] - z[u, labels_]
    return LogitMeasures(
        shares,
        w,
        valid,
        restricted.mean(),
        excluded.mean() if len(train_idx) else torch.tensor(math.nan, dtype=F64, device=table.device),
    )


def gini(x: torch.Tensor) -> torch.Tensor:
    """Gini coefficient of non-negative values: 0 = all equal, → 1 = one holds everything."""
    s = torch.sort(x).values
    m, total = len(s), s.sum()
    if m == 0:
        return torch.tensor(math.nan, dtype=F64)
    k = torch.arange(1, m + 1, dtype=s.dtype, device=s.device)
    return torch.where(total > 0, ((2 * k - m - 1) * s).sum() / (m * total), math.nan)


def embedding_norms(E: torch.Tensor) -> torch.Tensor:
    """‖DFT of E over the axis rows‖₂ over the embedding axis, w = 1..⌊n/2⌋ (the constant left out)."""
    return torch.sqrt((torch.fft.rfft(E, dim=0).abs() ** 2).sum(1))[1:]


@dataclass(frozen=True)
class Ring:
    """E's rows in the plane of one frequency w, and how close each is to the ideal ring (tensors on E's
    device; numpy arrays and numbers for a caller that gave arrays)."""

    freq: Any  # w: an int, or a 0-d tensor picked on the device
    x: Any  # (n,) coordinates of E_t in the plane of the ring fitted to the other rows (leave-one-out)
    y: Any
    distance: Any  # (n,) ‖(x_t, y_t) − (cos 2πwt/n, sin 2πwt/n)‖: 0 on the ideal ring
    rqi: Any  # 0-d


def ring(E: torch.Tensor, w: int | torch.Tensor) -> Ring:
    """E (n, d), rows in axis order, in the plane of frequency w (1 <= w < n/2), each row left out.

    For each token t the ring c + A cos θ + B sin θ (θ_s = 2πws/n) is fitted by least squares to the OTHER
    rows, and (x_t, y_t) solve E_t − c ≈ x_t·A + y_t·B. An ideal ring lands exactly on the unit circle at
    θ_t either way; leaving the row out keeps a row from being projected onto coefficients it helped
    compute, which put a random row at distance 0.6–0.75 (not about 1) and lifted RQI's chance level to
    2.3–2.8/n at d = 64–128 (issue 33). With the row left out a random E scores about 1/n.
    """
    n, dev = E.shape[0], E.device
    theta = 2 * math.pi * torch.as_tensor(w, dtype=F64, device=dev) * torch.arange(n, dtype=F64, device=dev) / n
    X = torch.stack([torch.ones_like(theta), torch.cos(theta), torch.sin(theta)], 1)  # (n, 3)
    # Least squares without row t by a rank-one downdate of the normal equations, for every t at once.
    # solve_ex: no check of the factorization, so no wait for the device (a singular system gives inf/NaN).
    G = X.T @ X - X[:, :, None] * X[:, None, :]  # (n, 3, 3): XᵀX without row t
    XtE = X.T @ E  # (3, d)
    coef = torch.linalg.solve_ex(G, XtE[None] - X[:, :, None] * E[:, None, :]).result  # (n, 3, d): c, A, B
    AB = coef[:, 1:]  # (n, 2, d)
    rhs = torch.einsum("tkd,td->tk", AB, E - coef[:, 0])  # (n, 2)
    xy = torch.linalg.solve_ex(AB @ AB.transpose(1, 2), rhs[:, :, None]).result[:, :, 0]  # E_t − c_t ≈ x A_t + y B_t
    x, y = xy[:, 0], xy[:, 1]
    distance = torch.hypot(x - torch.cos(theta), y - torch.sin(theta))
    return Ring(w, x, y, distance, parallelogram_share(torch.atan2(y, x)))


def shuffle_order(n: int, seed: int) -> np.ndarray:
    """The fixed random order of the shuffled-E baseline's rows."""
    return np.random.default_rng(seed).permutation(n)


def parallelogram_share(phase: torch.Tensor) -> torch.Tensor:
    """RQI on a ring: the share of modular parallelograms (i, j, m, k), i + j ≡ m + k (mod n), {m, k} ≠ {i, j},
    whose phases close, |φ_i + φ_j − φ_m − φ_k| < π/n (mod 2π): half the spacing of the ideal ring.
    Liu et al. (2022) count E_i + E_j ≈ E_m + E_k on a line; on a ring the parallelogram closes in phase.
    The swapped pair (m, k) = (j, i) closes for any phases and is left out, so uniform random phases score
    1/n (with it in, 2/n)."""
    n = len(phase)
    i = torch.arange(n, device=phase.device)
    pair = phase[i[None, :]] + phase[(i[:, None] - i[None, :]) % n]  # (r, i): φ_i + φ_(r-i)
    diff = pair[:, :, None] - pair[:, None, :]  # (r, i, m)
    close = torch.abs((diff + math.pi) % (2 * math.pi) - math.pi) < math.pi / n
    # (i, j) itself (m = i) and its swap (m = j) close for any phases: n² + n² − n entries of (r, i, m),
    # n of them where i = j (2i ≡ r); they are not parallelograms.
    trivial = 2 * n * n - n
    return (close.sum() - trivial).to(F64) / (n**3 - trivial)


def key_energy_share_of(E: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row of E (n, d): the share of its centred energy on the DFT rows in `mask` (over the axis)."""
    centred = E - E.mean(0)
    part = torch.fft.ifft(torch.where(mask[:, None], torch.fft.fft(centred, dim=0), 0), dim=0).real
    total = (centred**2).sum(1)
    resid = ((centred - part) ** 2).sum(1)
    return torch.where(total > 0, 1 - resid / total, 0.0).clamp(0.0, 1.0)


def median(x: torch.Tensor) -> torch.Tensor:
    """numpy's median of a 1-D tensor: the mean of the two middle values for an even length, NaN with a NaN."""
    s = torch.sort(x).values
    n = len(s)
    return torch.where(x.isnan().any(), math.nan, (s[(n - 1) // 2] + s[n // 2]) / 2)


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
        self.y = torch.as_tensor(labels(cfg.data, pairs).reshape(n, n), dtype=torch.long, device=device)
        x_train = ctx.x_train.cpu().numpy()
        b_col = 2 if cfg.data.format == "a_op_b_eq" else 1
        pos = self.axis.position
        a, b = pos[x_train[:, 0]], pos[x_train[:, b_col]]
        on = (a >= 0) & (b >= 0)
        train = np.zeros((n, n), dtype=bool)
        train[a[on], b[on]] = True
        self.train_idx = torch.as_tensor(np.flatnonzero(train), device=device)  # training pairs, row-major
        train_pairs = np.stack([x_train[:, 0], x_train[:, b_col]], 1)
        self.rare = {int(t) for t in rare_tokens(operand_counts(train_pairs, cfg.data.p), cfg.probe.rare_k)}
        self.buffers = dict(ctx.model.named_buffers())
        self.order = torch.as_tensor(order, device=device)  # E's operand rows in axis order
        self.shuffle = torch.as_tensor(shuffle_order(n, cfg.train.seed + PROBE_SEED_OFFSET), device=device)

    @torch.no_grad()
    def logit_table(self) -> torch.Tensor:
        """The model's logits on every axis pair, (n, n, C) float64 on the model's device."""
        params = {**self.ctx.params, **self.buffers}
        out = [functional_call(self.ctx.model, params, (self.x[k : k + CHUNK],)) for k in range(0, len(self.x), CHUNK)]
        n = self.axis.n
        return torch.cat(out).double().reshape(n, n, -1)

    @torch.no_grad()
    def measure(self, step: int) -> dict[str, Any]:
        n = self.axis.n
        m = logit_measures(self.logit_table(), self.y, self.train_idx, self.axis.sign, self.ctx.cfg.probe.fixed_keys)
        weight_sq = sum(p.detach().double().pow(2).sum() for p in self.ctx.params.values())
        # Every number of the row, on the device, in this order; one read to the host below.
        parts: dict[str, torch.Tensor] = {
            "restricted_loss": m.restricted_loss,
            "excluded_loss": m.excluded_loss,
            "key_share": m.key_share,
            "weight_sq": torch.as_tensor(weight_sq),
            "shares": m.shares,
            "w": m.w,
            "valid": m.valid,
        }
        if self.blocks.e_names:
            E = self.blocks.embedding.double()[self.order]  # operand rows in axis order
            norms = embedding_norms(E)
            ringable = m.valid & (2 * m.w < n)  # the strongest key with a ring (not the Nyquist frequency)
            strongest_e = torch.argmax(norms[: (n - 1) // 2]) + 1  # else the strongest frequency of E
            first = m.w.index_select(0, torch.argmax(ringable.int(), 0, keepdim=True))[0]  # no 0-d tensor index
            w = torch.where(ringable.any(), first, strongest_e)
            r, base = ring(E, w), ring(E[self.shuffle], w)
            share = key_energy_share_of(E, frequency_mask(n, m.w, m.valid, constant=False))
            parts |= {
                "gini_E": gini(norms),
                "rqi": r.rqi,
                "rqi_shuffled": base.rqi,
                "ring_distance": median(r.distance),
                "ring_distance_shuffled": median(base.distance),
                "ring_members": (share >= JOIN_SHARE).sum(),
                "ring_freq": w,
                "x": r.x,
                "y": r.y,
                "distance": r.distance,
                "membership": share,
            }
        flat = torch.cat([t.reshape(-1).to(F64) for t in parts.values()]).tolist()  # the one read per measurement
        host: dict[str, list[float]] = {}
        at = 0
        for k, t in parts.items():
            host[k] = flat[at : at + t.numel()]
            at += t.numel()
        keys = [int(w) for w, v in zip(host["w"], host["valid"], strict=True) if v]
        out: dict[str, Any] = {k: host[k][0] for k in ("restricted_loss", "excluded_loss", "key_share")}
        out |= {"key_freqs": len(keys), "weight_sq": host["weight_sq"][0]}
        ring_part: dict[str, Any] = {"ring_freq": 0, "tokens": (), "x": (), "y": (), "distance": (), "membership": ()}
        if self.blocks.e_names:
            out |= {k: host[k][0] for k in ("gini_E", "rqi", "rqi_shuffled", "ring_distance", "ring_distance_shuffled")}
            out["ring_members"] = int(host["ring_members"][0])
            ring_part = {
                "ring_freq": int(host["ring_freq"][0]),
                "tokens": tuple(int(t) for t in self.axis.order),
                "x": tuple(host["x"]),
                "y": tuple(host["y"]),
                "distance": tuple(host["distance"]),
                "membership": tuple(host["membership"]),
                "rare": tuple(int(t) in self.rare for t in self.axis.order),
            }
        out["circuit"] = CircuitLogged(step=step, shares=tuple(host["shares"]), keys=tuple(keys), **ring_part)
        return out
