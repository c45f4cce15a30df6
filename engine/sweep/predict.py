"""A sweep's wall time on a card, predicted from the batches it forms: a cost model fitted to measured runs.

`grok sweep --preset NAME --plan --device cuda --free-gib G` plans each sweep as the GPU sweep would
(engine/sweep/batched.py `plan`, batches sized to G GiB) and prices every batch:

    T_b = t₀ + S_b (a_b + β N_b B_b / 512 + h_b N_b) + N_b Σ_k m_k c_k

t₀ is a batch's set-up in a warm worker (0.24 s to a member's first row on the CPU), S_b the batch's step
budget (the most any member trains: max_steps, less fork_at for a fork), N_b its members, B_b their batch;
m_k the measurements of instrument k one member takes in S_b steps (its evaluations, and each probe at its
cadence) and c_k one measurement's seconds. a_b is a step's fixed cost, a recorded step's where the step
records as a CUDA graph, else an eager step's (SGD, decay sets, lazy rows, frozen entries, a gradient
filter); h_b the host's work per member on a step whose gradients it reads (the gradient sampler, the
gradient and balance probes), else 0. Measured on the H200: a recorded and β (`bench/gpu_speed.py many`:
2,839 steps/s alone, 10,432 model-steps/s at N = 32, 9,366 to 12,310 at 128), the c_k (`grok run --preset
random_mul --steps 3000`: two Hessians 0.27 s, seven ranks with 31 gradient and Fourier measurements each
0.39 s, 30 evaluations 0.02 s). A sweep's batches share the card, one worker process each, so its wall
time is

    W = s₀ + max(max_b T_b, μ (1 + z (k − 1)) Σ_b T_b)

with k = min(batches, workers) processes on the card at once: its longest batch alone, or the card's whole
work scaled by μ (one process's host time overlapping another's kernels, below 1) and by 1 + z (k − 1)
(the card switching between k processes), plus each sweep's start-up s₀. `fit` sets s₀, μ, h and the eager
a to the H200's measured segments (`SEGMENTS`), z held at 0.03 (a fit with it free gave 0.03); `grok sweep
--plan` prints the fit's relative residuals beside its prediction. Every member is priced at its whole
budget; the segments' members stopped early where their rules said, so the fitted constants carry an
average of that.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.config import RunConfig
from engine.records.group_dir import Member, SweepSpec

GIB = 2**30
H200_FREE_GIB = 139.3  # what the H200 of the measured runs reported free (bench/gpu_check.sh --paper)
STEP_S = 0.26e-3  # a: one recorded step's fixed cost, s (N = 1: 0.352 ms, less β)
BATCH_SETUP_S = 0.24  # a batch's set-up in a warm worker, to its first row (a member's, on the CPU)
MEMBER_STEP_S = 0.088e-3  # β: each member's share of a step at batch 512, s ((3.07 - 0.35) ms / 31 at N = 32)
# c_k: one member's measurement, s; a probe not named costs OTHER_PROBE_S
EVAL_S = 0.0007
PROBE_S = {"hessian": 0.135, "rank": 0.04}
OTHER_PROBE_S = 0.0018
# keys members may differ in within a stack since the measured runs (engine/train/many.py FREE_KEYS)
NEWLY_FREE = (
    ("train", "target_rate"),
    ("train", "target_draws_as"),
    ("optim", "decay_sets"),
    ("optim", "lazy_rows"),
    ("optim", "lazy_decay"),
    ("optim", "equal_rows"),
)
PROBES = ("hessian", "rank", "grad", "fourier", "med", "norm", "update", "progress", "targets")


@dataclass(frozen=True)
class Segment:
    """A measured stretch of sweeps on the H200: the presets it ran in full, in order, and its seconds."""

    presets: tuple[str, ...]
    seconds: float
    source: str  # where the number was recorded
    members: str = ""  # "stacked" or "alone": only the members that trained so in that call


# The H200's measured segments (torch 2.11.0+cu130, float32, 16 workers, 139.3 GiB free). The sweeps'
# start times are their kept groups' `created` (docs/data/*/kept.json); the calls' totals are `grok report`'s.
SEGMENTS: tuple[Segment, ...] = (
    Segment(("fig4_sampling", "fig4_skew_heldout"), 84, "kept groups' start times, 08:36:53 to 08:38:17"),
    Segment(("fig4_token_skew",), 51, "kept groups' start times, 08:38:17 to 08:39:08"),
    Segment(("skew_fixes_mul",), 104, "kept groups' start times, 08:44:28 to 08:46:12"),
    Segment(("skew_fixes_add", "fig6_optimizers"), 91, "kept groups' start times, 08:46:12 to 08:47:43"),
    Segment(
        ("fig2_embeddings", "fig2_long", "fig4_sampling", "fig4_skew_heldout", "fig4_token_skew", "fig4_epochs"),
        276,
        "bench/gpu_check.sh --paper, first call: 6 of 20 sweeps in 4.6 min (commit 9fcc9b4)",
    ),
    Segment(
        ("fig2_embeddings", "fig2_long", "fig4_sampling", "fig4_skew_heldout", "fig4_token_skew"),
        222,
        "bench/gpu_check.sh --paper, an earlier call: 5 of 20 sweeps in 3.7 min (64 batches)",
    ),
    Segment(("cure_decouple",), 127.7, "grok sweep --preset cure_decouple --device cuda: the 50 stacked", "stacked"),
    Segment(("cure_decouple",), 165.3, "its --resume: the 40 weighted-epoch members, each alone", "alone"),
)


@dataclass(frozen=True)
class CardModel:
    """The fitted part of the model: each sweep's start-up s₀ (s), μ and z (see the module docstring)."""

    start_s: float
    overlap: float  # μ
    observed_s: float  # h: s per member and step whose gradients the host reads
    eager_s: float = 1.9e-3  # a of an eager step, s (the eager loop alone: 526 steps/s)
    switching: float = 0.03  # z

    def sweep_seconds(self, batches: Sequence[Sequence[RunConfig]], workers: int = 16) -> float:
        """W of one sweep's batches (each a list of its members' configs) with `workers` workers."""
        return self.wall(tuple(self.batch_seconds(b) for b in batches), workers)

    def batch_seconds(self, batch: Sequence[RunConfig]) -> float:
        """T_b: one batch alone on the card."""
        return self.priced(batch_parts(batch))

    def priced(self, parts: tuple[float, float, float]) -> float:
        """T_b from `batch_parts`."""
        fixed, eager, observed = parts
        return fixed + self.eager_s * eager + self.observed_s * observed

    def wall(self, t: tuple[float, ...], workers: int) -> float:
        """W of one sweep whose batches take t seconds each alone."""
        k = max(min(len(t), workers), 1)
        return self.start_s + max(max(t, default=0.0), self.overlap * (1 + self.switching * (k - 1)) * sum(t))


def measurements(cfg: RunConfig, steps: int) -> dict[str, int]:
    """Instrument -> the measurements one member takes in `steps` steps: its evaluations and each probe on
    (at step 0 and every `every` steps)."""
    out = {"eval": steps // cfg.train.eval_every + 1}
    for k in PROBES:
        every = int(getattr(cfg.probe, f"{k}_every", 0) or 0)
        if every > 0:
            out[k] = steps // every + 1
    return out


def records(cfg: RunConfig) -> bool:
    """Whether the member's step records as a CUDA graph (engine/train/gpu/cuda_graph.py `unfit`, and the
    row rules and frozen entries that keep it eager)."""
    o, t = cfg.optim, cfg.train
    eager = (
        not t.cuda_graph
        or o.name not in ("adam", "adamw")
        or o.grokfast_alpha > 0
        or o.grokfast_lambda > 0
        or o.orthogonal
        or bool(t.frozen.strip() or t.trainable.strip())
        or bool(o.decay_sets or o.lazy_rows or o.lazy_decay or o.equal_rows)
    )
    return not eager


def observes(cfg: RunConfig) -> bool:
    """Whether the host reads the member's gradients at every step (the gradient sampler, the gradient and
    balance probes: engine/train/loop.py `_observe`)."""
    return cfg.train.sampler == "gradient" or cfg.probe.grad_every > 0 or cfg.probe.balance


def batch_parts(batch: Sequence[RunConfig]) -> tuple[float, float, float]:
    """T_b's known part (s), its eager steps (a's count where the step cannot record) and its member-steps
    whose gradients the host reads (h's count)."""
    if not batch:
        return 0.0, 0.0, 0.0
    steps = max(c.train.max_steps for c in batch)
    n, rows = len(batch), batch[0].train.batch_size
    recorded = all(records(c) for c in batch)
    step = steps * ((STEP_S if recorded else 0.0) + MEMBER_STEP_S * n * rows / 512)
    instruments = sum(
        m * (EVAL_S if k == "eval" else PROBE_S.get(k, OTHER_PROBE_S))
        for c in batch
        for k, m in measurements(c, steps).items()
    )
    return (
        BATCH_SETUP_S + step + instruments,
        0.0 if recorded else float(steps),
        float(steps * sum(observes(c) for c in batch)),
    )


@dataclass(frozen=True)
class SweepPrediction:
    """One sweep planned for a card: its members, its batches' sizes and its predicted wall time."""

    preset: str
    members: int
    batches: tuple[int, ...]  # members per batch, largest first
    seconds: float


@functools.lru_cache(maxsize=256)
def preset_batches(
    name: str, free_gib: float, workers: int, parents: str = "", measured: bool = False
) -> tuple[tuple[RunConfig, ...], ...]:
    """The batches of preset `name` as a GPU sweep plans them with `free_gib` GiB free and `workers` workers.
    A fork member is priced from fork_at (a step) and stacks with forks of that step. `parents`: the preset of the
    group given to --parents, whose ended runs stand for this preset's members of the same arm, cell and
    seed (engine/sweep/parents.py): those are adopted, not trained. `measured`: the batches the planner of the
    measured runs formed (commit 9fcc9b4: the paper's 576 members in 68 batches), where forks and members
    with weighted epochs trained alone and members stacked only with equal `NEWLY_FREE` keys."""
    from engine.config import apply_overrides
    from engine.sweep.batched import plan
    from engine.sweep.member import MemberSpec
    from engine.sweep.spec import trained_steps

    members, fork_at, spec = _members(name)
    adopted = {_key(m) for m, _ in _members(parents)[0] if not m.fork_of} if parents else set()
    specs = []
    for m, c in members:
        if not m.fork_of and _key(m) in adopted:
            continue
        c = apply_overrides(c, {"train.device": "cuda"})
        if m.fork_of:  # priced from its fork step: the budget it trains
            c = apply_overrides(c, {"train.max_steps": str(trained_steps(spec, m, c))})
        # a fork starts at its fork step; the measured runs' planner put forks and weighted members alone
        alone = (measured and (bool(m.fork_of) or weighted(c))) or (bool(m.fork_of) and not fork_at)  # at a phase
        start = None if alone else fork_at if m.fork_of else 0
        specs.append(MemberSpec(m.id, c, f"{name}/{m.id}", has_checkpoint=bool(m.fork_of), start_step=start))
    parts: dict[tuple[object, ...], list[MemberSpec]] = {}
    for sp in specs:  # the measured runs' planner: no stack across these keys
        key = tuple(getattr(getattr(sp.config, g), k) for g, k in NEWLY_FREE) if measured else ()
        parts.setdefault(key, []).append(sp)
    free = int(free_gib * GIB)
    return tuple(tuple(s.config for s in b) for part in parts.values() for b in plan(part, workers=workers, free=free))


def weighted(cfg: RunConfig) -> bool:
    """Whether the member's shuffled epochs are weighted: each seed's epoch has its own length."""
    t = cfg.train
    targeted = cfg.data.starve_k > 0 and (t.target_rate != 1 or bool(t.target_draws_as))
    return t.sampler == "balanced_epochs" or (t.sampler == "shuffle" and targeted)


def _members(name: str) -> tuple[list[tuple[Member, RunConfig]], int, SweepSpec]:
    """The preset's members with their configs, its fork step (0 where fork_at is a phase or absent) and its
    sweep table."""
    from engine.config.presets import load_preset
    from engine.sweep.spec import expand, parse_sweep

    p = load_preset(name)
    spec = parse_sweep(p.sweep, str(p.path))
    return expand(p.config, spec, str(p.path)), int(spec.fork_at) if spec.fork_at.isdigit() else 0, spec


def _key(m: Member) -> tuple[str, str, int]:
    """What --parents matches a member on: its arm, grid cell and seed (engine/sweep/parents.py)."""
    return m.arm, repr(sorted(m.values.items())), m.seed


def predict(
    names: Iterable[str], free_gib: float, workers: int, parents: str = "", model: CardModel | None = None
) -> list[SweepPrediction]:
    """Each sweep of `names` planned for a card with `free_gib` GiB free, and its predicted wall time;
    `parents` as in `preset_batches`."""
    model = model or H200
    out = []
    for name in names:
        batches = preset_batches(name, free_gib, workers, parents)
        sizes = tuple(sorted((len(b) for b in batches), reverse=True))
        out.append(SweepPrediction(name, sum(sizes), sizes, model.sweep_seconds(batches, workers)))
    return out


def _segment_parts(seg: Segment, workers: int) -> list[list[tuple[float, float, float]]]:
    """Each sweep of the segment as its batches' `batch_parts`, planned as the measured runs' code planned
    them; `members` keeps the stacked ones ("stacked") or the weighted-epoch ones, each alone ("alone")."""
    out = []
    for name in seg.presets:
        batches = preset_batches(name, H200_FREE_GIB, workers, measured=True)
        if seg.members:
            batches = tuple(b for b in batches if weighted(b[0]) == (seg.members == "alone"))
        out.append([batch_parts(b) for b in batches])
    return out


def fit(segments: tuple[Segment, ...] = SEGMENTS, workers: int = 16) -> tuple[CardModel, list[float]]:
    """s₀, μ, h and the eager step's a that minimize the segments' squared relative error: a grid over μ
    (0.05 to 2), h (0 to 3 ms) and a (0.25 to 7.5 ms), s₀ by least squares at each point, at least 0. The
    model and each segment's relative residual, (predicted − measured) / measured."""
    import numpy as np

    mu = np.arange(1, 41)[:, None, None] * 0.05
    rho = np.arange(0, 31)[None, :, None] * 0.1e-3
    eager = np.arange(1, 31)[None, None, :] * 0.25e-3
    switching = CardModel(0.0, 0.0, 0.0).switching
    y = np.array([s.seconds for s in segments])
    base, n = [], []
    for seg in segments:
        total = np.zeros((mu.size, rho.size, eager.size))
        sweeps = _segment_parts(seg, workers)
        for sweep in sweeps:
            t = np.stack([f + eager * e + rho * o + 0 * mu for f, e, o in sweep])  # each batch's T_b on the grid
            k = max(min(len(sweep), workers), 1)
            total = total + np.maximum(t.max(axis=0), mu * (1 + switching * (k - 1)) * t.sum(axis=0))
        base.append(total)
        n.append(len(sweeps))
    b, nk, yk = np.stack(base), np.array(n)[:, None, None, None], y[:, None, None, None]
    s0 = np.maximum((nk * (yk - b) / yk**2).sum(0) / (nk**2 / yk**2).sum(0), 0.0)  # least Σ ((b + n s₀ − y) / y)²
    err = (((b + nk * s0 - yk) / yk) ** 2).sum(0)
    i, j, e = np.unravel_index(int(np.argmin(err)), err.shape)
    model = CardModel(
        round(float(s0[i, j, e]), 1), round(float(mu[i, 0, 0]), 4), round(float(rho[0, j, 0]), 6),
        round(float(eager[0, 0, e]), 6),
    )  # fmt: skip
    return model, residuals(model, segments, workers)


def residuals(model: CardModel, segments: tuple[Segment, ...] = SEGMENTS, workers: int = 16) -> list[float]:
    """Each segment's (predicted − measured) / measured under `model`."""
    out = []
    for s in segments:
        pred = sum(model.wall(tuple(model.priced(b) for b in sweep), workers) for sweep in _segment_parts(s, workers))
        out.append((pred - s.seconds) / s.seconds)
    return out


def rms(values: list[float]) -> float:
    """The root mean square of `values` (the fit's relative residuals)."""
    return math.sqrt(sum(v * v for v in values) / len(values)) if values else 0.0


# `fit()` on SEGMENTS, and its relative residuals in SEGMENTS' order (tests/engine/sweep/test_predict.py
# checks that it still gives these). The eager step's a sits at the grid's floor: the measured segments
# cannot tell it from a recorded step's (their eager batches are the cure's, shared by 16 workers).
H200 = CardModel(start_s=13.9, overlap=0.75, observed_s=0.6e-3, eager_s=0.25e-3)
H200_RESIDUALS = (0.054, -0.087, -0.038, 0.019, 0.113, -0.013, -0.330, 0.116)


def render(rows: list[SweepPrediction], free_gib: float, workers: int) -> str:
    """The predicted plan as text: a row per sweep, the total, and the fit it rests on (80 columns)."""
    res = H200_RESIDUALS
    lines = [
        f"a card with {free_gib:g} GiB free, {workers} workers; wall time predicted by the H200's",
        f"cost model (engine/sweep/predict.py), fitted to {len(res)} measured runs of sweeps:",
        f"residuals {min(res):+.0%} to {max(res):+.0%}, rms {rms(list(res)):.0%}; every member its whole budget",
        f"{'preset':<22} {'members':>7} {'batches':>7} {'largest':>7} {'predicted':>10}",
    ]
    for r in rows:
        largest = max(r.batches, default=0)
        lines.append(f"{r.preset:<22} {r.members:>7} {len(r.batches):>7} {largest:>7} {_duration(r.seconds):>10}")
    total = sum(r.seconds for r in rows)
    n, b = sum(r.members for r in rows), sum(len(r.batches) for r in rows)
    lines.append(f"{'total':<22} {n:>7} {b:>7} {'':>7} {_duration(total):>10}")
    return "\n".join(lines)


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"
