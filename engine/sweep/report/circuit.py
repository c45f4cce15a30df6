"""The circuit report: the `progress_phases` verdicts of docs/REPRODUCTION.md from run directories.

For each finished run: its phases (engine/train/phases.py `circuit_phases_from_rows`, the rules of docs/PROBES.md);
when the restricted loss and the test loss first fall below half of chance, ln(p)/2, at or after memorization
(Nanda et al. 2023: the restricted loss falls first); how ‖θ‖² moves over the jump, from the first evaluation
with val acc >= 0.10 to G (read at the logged steps around them), against the window of the same length before
it (their "cleanup"); and whether the rare tokens (`probe.rare_k`) join the embedding ring last (§4.2's
prediction, from ring.csv, keyfreq.csv and joins.csv of the progress probe). Runs are grouped by task and
split (random, or token-starved as in Fig. 4); each quantity is a mean over seeds with the sweep statistics'
spread (engine/records/stats.py `seed_interval`: the range below 8 runs, a 95% t-interval from 8)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.config import ConfigError
from engine.events import Status
from engine.records.group_dir import member_fields
from engine.records.run import read_run
from engine.records.stats import seed_interval
from engine.rundir import JOINS, KEYFREQ, RING, clean_text, is_group, is_run_dir, number, read_csv
from engine.train.phases import circuit_phases_from_rows

JUMP_START_ACC = 0.10  # the jump runs from the first evaluation with val acc >= this to G (val acc >= 0.95)


def run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """The run directories named: a sweep group directory stands for its members' directories."""
    out: list[Path] = []
    for p in map(Path, paths):
        if is_group(p):
            out += sorted(member_fields(p))
        elif is_run_dir(p):
            out.append(p)
        else:
            raise ConfigError(f"{clean_text(p)}: not a run directory or a sweep group directory")
    return out


def _first(
    rows: Iterable[dict[str, float]], col: str, below: float | None = None, at_least: float | None = None
) -> int | None:
    for r in rows:
        v = r.get(col, math.nan)
        if (below is not None and v < below) or (at_least is not None and v >= at_least):
            return int(r["step"])
    return None


def _mean(xs: list[float], median: bool = False) -> float | None:
    return (float(np.median(xs)) if median else float(np.mean(xs))) if xs else None


def last_share(joins: Sequence[dict[str, str]]) -> float | None:
    """The share of rare tokens among the last k to join the circuit, k the number of rare tokens.

    A token that never joined counts as last. Tokens that joined at the same measurement fill the last
    slots in no order: each of the tied tokens at the boundary gets an equal part of the slots left, so a
    tie counts as rare as often as chance says. Chance is k over the number of tokens.
    """
    k = sum(r["rare"] == "1" for r in joins)
    if not k:
        return None
    steps = sorted(((number(r["join_step"]) if r["join_step"] else math.inf), r["rare"] == "1") for r in joins)
    bound = steps[-k][0]
    later = [rare for s, rare in steps if s > bound]
    tied = [rare for s, rare in steps if s == bound]
    return (sum(later) + (k - len(later)) * sum(tied) / len(tied)) / k


def ring_at_end(ring: Sequence[dict[str, str]], keyfreq: Sequence[dict[str, str]]) -> dict[str, float | None]:
    """Membership (mean), radius and phase error in degrees (medians) of rare and other tokens at the last
    measurement. The phase error is a token's angle's distance from its ideal angle 2πwt/n in the plane
    of the strongest key frequency w (the one with 2w < n; t the token's place on the axis)."""
    if not ring:
        return {}
    last = max(int(r["step"]) for r in ring)
    end = [r for r in ring if int(r["step"]) == last]
    n = len(end)
    keys = sorted((float(r["share"]), int(r["freq"])) for r in keyfreq if int(r["step"]) == last and r["key"] == "1")
    w = next((f for _, f in reversed(keys) if 2 * f < n), None)
    vals: dict[str, dict[bool, list[float]]] = {k: {True: [], False: []} for k in ("mem", "rad", "err")}
    for pos, r in enumerate(end):
        rare, x, y = r["rare"] == "1", number(r["x"]), number(r["y"])
        vals["mem"][rare].append(number(r["membership"]))
        vals["rad"][rare].append(math.hypot(x, y))
        if w is not None:
            off = math.atan2(y, x) - 2 * math.pi * w * pos / n
            vals["err"][rare].append(math.degrees(abs((off + math.pi) % (2 * math.pi) - math.pi)))
    out: dict[str, float | None] = {}
    for key, median in (("mem", False), ("rad", True), ("err", True)):
        out[f"{key}_rare"] = _mean(vals[key][True], median)
        out[f"{key}_common"] = _mean(vals[key][False], median)
    return out


def jump_span(logged: Sequence[int], j0: int | None, G: int | None) -> tuple[int, int] | None:
    """The steps ‖θ‖² is read at for the jump from j0 to G: the last logged step at or before j0 and the
    first at or after G. The progress probe logs ‖θ‖² at its own cadence (probe.progress_every, 200 steps
    in progress_mul) while j0 is an evaluation step (every 100), so j0 itself often has no value; the
    logged steps around the jump enclose it. None when the probe logged nothing on one side of it."""
    if j0 is None or G is None or j0 >= G:
        return None
    a = max((s for s in logged if s <= j0), default=None)
    b = min((s for s in logged if s >= G), default=None)
    return (a, b) if a is not None and b is not None and b > a else None


def run_measures(
    rows: list[dict[str, float]],
    p: int,
    ring: Sequence[dict[str, str]] = (),
    keyfreq: Sequence[dict[str, str]] = (),
    joins: Sequence[dict[str, str]] = (),
) -> dict[str, float | None]:
    """One run's quantities from its metrics rows and its progress files (None: not measured)."""
    ph = circuit_phases_from_rows(rows, p)
    M, C, U, G = (ph[k] for k in ("memorized_step", "circuit_step", "cleanup_step", "generalized_step"))
    half = math.log(p) / 2
    after = [r for r in rows if M is not None and r["step"] >= M]
    t_r, t_t = _first(after, "restricted_loss", below=half), _first(after, "val_loss", below=half)
    j0 = _first(rows, "val_acc", at_least=JUMP_START_ACC)
    w = {int(r["step"]): r["weight_sq"] for r in rows if math.isfinite(r.get("weight_sq", math.nan))}
    dw = ratio = None
    span = jump_span(sorted(w), j0, G)
    if span is not None:
        a, b = span
        dw = (w[b] - w[a]) / w[a]
        pre = min(w, key=lambda s: abs(s - (2 * a - b)))  # the window before the jump, as long as the jump
        if pre < a and w[pre] > 0 and w[a] > 0 and w[b] > 0:
            fall_jump = -(math.log(w[b]) - math.log(w[a])) / (b - a)
            fall_pre = -(math.log(w[a]) - math.log(w[pre])) / (a - pre)
            ratio = fall_jump / fall_pre if fall_pre > 0 else None
    at_g = next((r.get("val_acc_rare", math.nan) for r in rows if G is not None and r["step"] == G), None)
    at_c = next((r["val_acc"] for r in rows if C is not None and r["step"] == C), None)
    return {
        **{"M": M, "C": C, "U": U, "G": G, "t_r": t_r, "t_t": t_t, "j0": j0, "dw": dw, "rate_ratio": ratio},
        "lead": t_t - t_r if t_r is not None and t_t is not None else None,
        "C-M": C - M if C is not None and M is not None else None,
        "G-C": G - C if G is not None and C is not None else None,
        "G-U": G - U if G is not None and U is not None else None,
        "val_acc_at_C": at_c,
        "last_share": last_share(joins),
        "never_rare": sum(r["rare"] == "1" and not r["join_step"] for r in joins) if joins else None,
        "never_common": sum(r["rare"] != "1" and not r["join_step"] for r in joins) if joins else None,
        **ring_at_end(ring, keyfreq),
        "val_rare_at_G": at_g,
    }


def has_progress(every: int, rows: Sequence[dict[str, float]]) -> bool:
    """Whether a run measured the progress probe: its config runs it, or its rows hold restricted losses."""
    return every > 0 or any(math.isfinite(r.get("restricted_loss", math.nan)) for r in rows)


NO_PROBE = "no progress probe (probe.progress_every = 0): run it with --set probe.progress_every=100"


def circuit_cells(paths: Iterable[str | Path]) -> dict[tuple[str, str], list[dict[str, float | None]]]:
    """Every finished run's quantities, by (op, split): split is "starved" when data.starve_k is set.

    A run directory named without the progress probe is a ConfigError, and so is a group none of whose
    members ran it; a group's members without it are left out."""
    out: dict[tuple[str, str], list[dict[str, float | None]]] = {}
    for path in map(Path, paths):
        named = run_dirs([path])
        runs = [(d, read_run(d)) for d in named]
        probed = [(d, run) for d, run in runs if has_progress(run.config.probe.progress_every, run.rows)]
        if not probed:
            raise ConfigError(f"{clean_text(path)}: {NO_PROBE}")
        for d, run in probed:
            if run.status != Status.FINISHED:
                continue
            data = run.config.data
            split = "starved" if data.starve_k else "random"
            files = [read_csv(d / name) for name in (RING, KEYFREQ, JOINS)]
            out.setdefault((clean_text(data.op), split), []).append(run_measures(run.rows, data.p, *files))
    return dict(sorted(out.items()))


def summary(recs: Iterable[dict[str, Any]], key: str) -> tuple[float, float, float, int]:
    """(mean, lo, hi, n) of one quantity over the runs where it was measured: `seed_interval`'s mean and spread
    (the range below 8 runs, never called a 95% interval; the t-interval from 8)."""
    xs = [float(r[key]) for r in recs if r.get(key) is not None and math.isfinite(r[key])]
    sp = seed_interval(xs)
    return sp.mean, sp.lo, sp.hi, sp.n


# The pooled lines: each quantity over all runs, and the side of it that a claim counts (None: none).
POOLED: dict[str, tuple[str, float] | None] = {
    "lead": (">", 0),
    "C-M": None,
    "val_acc_at_C": None,
    "G-C": None,
    "dw": ("<", 0),
    "rate_ratio": (">", 1),
    "G-U": (">", 0),
}


def pooled(cells: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Over all runs, each POOLED quantity: its summary, its smallest and largest value, how many runs
    are on the claimed side (and, for G - U, how many have U at or before G)."""
    recs = [r for rs in cells.values() for r in rs]
    out: dict[str, dict[str, Any]] = {}
    for key, side in POOLED.items():
        xs = [float(r[key]) for r in recs if r.get(key) is not None and math.isfinite(r[key])]
        out[key] = {"stat": summary(recs, key), "min": min(xs, default=math.nan), "max": max(xs, default=math.nan)}
        if side is not None:
            op, v = side
            out[key]["side"] = sum(x > v if op == ">" else x < v for x in xs)
    out["G-U"]["at_or_before"] = sum(x >= 0 for x in [r["G-U"] for r in recs] if x is not None)
    return out
