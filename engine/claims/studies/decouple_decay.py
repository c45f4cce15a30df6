"""Study: where decay's sign turns (ours, §4.2, eqs. 3-6): the target rows' decay off, with everything training."""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.claims.cause_pairs import CELLS as STARVED_CELLS
from engine.claims.cause_pairs import _cell
from engine.claims.claim import Claim
from engine.claims.readings import Reading, direction, geo_ratio, n_seeds, part, spread
from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group, Member
from engine.rundir import read_metrics, read_summary

CELLS = {**STARVED_CELLS, "r1": "in the control (r = 1, all pairs)"}
CONTROL = "r1"
WINDOWS = (500, 5000)  # the forks' steps after 10,000: the factorial's window, and ten times it
# The claim, fixed before the data: decay off has the sign it has from step 0 (cure_decouple `nowd`, a
# row trained without its decay for the whole run): it raises the draw-starved targets (their rows are
# shortened by decay between sparse draws, eqs. 3-6) and lowers the one-pair targets (decay is what lets a
# row with one pair generalize), with W training, after 500 steps and after 5,000.
SIGN = {"r0.01": True, "m1_r1": False, "m1_matched": False}  # True: decay off raises the targets
ROOM, FLOOR = 0.95, 0.05  # a pair can show a rise only from below ROOM, a fall only from above FLOOR
SAME = 1e-9  # the two forks of a seed draw the same batches: their realized draw shares agree to this


@dataclass(frozen=True)
class Fork:
    """One fork's last evaluation and the draws it realized."""

    seed: int
    acc: float  # val_acc_target
    norm: float  # target_norm (the targets probe: the target rows' mean norm)
    draws: tuple[float, float]  # summary.json target_batch_share and target_draw_ratio


def fork_arm(arm: str) -> tuple[str, str, int] | None:
    """`adam_m1_r1_nowd_5000` -> (cell m1_r1, nowd, 5000); None for a parent's arm."""
    head, _, steps = arm.rpartition("_")
    parent, _, decay = head.rpartition("_")
    if decay not in ("wd", "nowd") or not steps.isdigit():
        return None
    return _cell(parent), decay, int(steps)


def _fork(group: Group, m: Member) -> Fork | None:
    d = group.member_dir(m)
    last = [r for r in read_metrics(d) if math.isfinite(r.get("val_acc_target", math.nan))]
    if not last:
        return None
    s = read_summary(d)
    draws = (s.target_batch_share or math.nan, s.target_draw_ratio or math.nan)
    return Fork(m.seed, last[-1]["val_acc_target"], last[-1].get("target_norm", math.nan), draws)


def forks(group: Group) -> dict[tuple[str, str, int], dict[int, Fork]]:
    """The ended forks by (cell, decay, window) and seed."""
    res = group.results()
    out: dict[tuple[str, str, int], dict[int, Fork]] = {}
    for m in group.members:
        key = fork_arm(m.arm) if m.fork_of else None
        r = res.get(m.id)
        if key is None or r is None or not r.ended:
            continue
        f = _fork(group, m)
        if f is not None:
            out.setdefault(key, {})[m.seed] = f
    return out


def pairs(fs: dict[tuple[str, str, int], dict[int, Fork]], cell: str, window: int) -> list[tuple[Fork, Fork]]:
    """(decay on, decay off) per seed, in seed order."""
    on, off = fs.get((cell, "wd", window), {}), fs.get((cell, "nowd", window), {})
    return [(on[s], off[s]) for s in sorted(on) if s in off]


def same_draws(a: Fork, b: Fork) -> bool:
    """The two forks realized the same draws (one sampler seed, one checkpoint): they differ in decay alone."""
    both = zip(a.draws, b.draws, strict=True)
    return all(math.isfinite(x) and math.isfinite(y) and abs(x - y) <= SAME for x, y in both)


def accuracy_outcome(ps: list[tuple[Fork, Fork]], raises: bool) -> Outcome:
    """Per seed: decay off moves the targets the claimed way. A pair whose draws differ, or with no room to
    move that way (at ROOM or above for a rise, at FLOOR or below for a fall), cannot tell."""
    agree: list[bool | None] = []
    opp: list[bool] = []
    for a, b in ps:
        d = b.acc - a.acc
        room = a.acc < ROOM if raises else a.acc > FLOOR
        if not same_draws(a, b) or not room:
            agree.append(None)
            opp.append(False)
            continue
        agree.append(d > 0 if raises else d < 0)
        opp.append(d < 0 if raises else d > 0)
    return Outcome(agree, opp)


def _log_ratio(a: Fork, b: Fork) -> float:
    return math.log(b.norm / a.norm) if a.norm > 0 and b.norm > 0 else math.nan


def lengthening(fs: dict[tuple[str, str, int], dict[int, Fork]], cell: str, window: int) -> list[float]:
    """Per seed: how much more decay off lengthens the cell's target rows than the control's, as log(off / on)
    in the cell less log(off / on) in the control (r = 1) of the same seed. Above 0: the starved rows gain more."""
    ctl = {a.seed: _log_ratio(a, b) for a, b in pairs(fs, CONTROL, window)}
    out = []
    for a, b in pairs(fs, cell, window):
        x, y = _log_ratio(a, b), ctl.get(a.seed, math.nan)
        if math.isfinite(x) and math.isfinite(y):
            out.append(x - y)
    return out


def _norms(ps: list[tuple[Fork, Fork]]) -> str:
    """The target rows' norm, off over on, by seed: geometric mean and range (readings.geo_ratio)."""
    return geo_ratio([(b.norm, a.norm) for a, b in ps])


def table(fs: dict[tuple[str, str, int], dict[int, Fork]]) -> str:
    """The page's table: per cell and window, the share of batches that hold a target (summary.json
    target_batch_share, eq. 4's p_i), the targets' accuracy with decay on and off, the change and the seeds it
    raises, the rows' norm off over on, and the pairs whose two forks drew the same batches."""
    cols = (
        "cell",
        "batch share",
        "steps after 10,000",
        "targets, decay on",
        "decay off",
        "off − on",
        "higher",
        "norm, off / on",
        "same draws",
    )
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for cell in CELLS:
        for window in WINDOWS:
            ps = pairs(fs, cell, window)
            if not ps:
                continue
            d = [b.acc - a.acc for a, b in ps]
            out.append(
                f"| {cell} | {spread([a.draws[0] for a, _ in ps])} | {window:,} | {spread([a.acc for a, _ in ps])} "
                f"| {spread([b.acc for _, b in ps])} "
                f"| {spread(d, sign=True)} | {sum(x > 0 for x in d)}/{len(d)} | {_norms(ps)} "
                f"| {sum(same_draws(a, b) for a, b in ps)}/{len(ps)} |"
            )
    return "\n".join(out)


def decouple_decay(group: Group) -> Reading:
    """Issue 52, item 1: decouple_cause's Adam parents and an unstarved cell, forked at 10,000 with everything
    training (W too), the target rows' decay kept (wd) or taken off (nowd), read at the last evaluation after
    500 and after 5,000 steps, paired by seed. Parts: decay off has its from-step-0 sign in each starved cell
    at both windows (SIGN), and it lengthens each starved cell's rows more than the control's (5,000 steps).
    The values name every cell, the control and three pairs at r = 1 included."""
    fs = forks(group)
    parts, values = [], {}
    for window in WINDOWS:
        for cell, where in CELLS.items():
            ps = pairs(fs, cell, window)
            key = f"{cell.replace('.', '')}_{window}"  # a note's {key}: no dots
            d = [b.acc - a.acc for a, b in ps]
            values[f"{key}_change"] = spread(d, sign=True)
            values[f"{key}_on"] = spread([a.acc for a, _ in ps])
            values[f"{key}_off"] = spread([b.acc for _, b in ps])
            values[f"{key}_norm"] = _norms(ps)
            values[f"{key}_draws"] = f"{sum(same_draws(a, b) for a, b in ps)} of {len(ps)}"
            if cell not in SIGN:
                continue
            o = accuracy_outcome(ps, SIGN[cell])
            values[f"{key}_k"] = o.k_of_n()
            verb = "raises" if SIGN[cell] else "lowers"
            evidence = f"{o.k_of_n('seeds ' + ('higher' if SIGN[cell] else 'lower'))}; off − on: {spread(d, sign=True)}"
            parts.append(part(f"{where}, decay off {verb} the targets after {window:,} steps", o, evidence))
    window = WINDOWS[-1]
    for cell in SIGN:
        x = lengthening(fs, cell, window)
        o = direction(x, True)
        key = f"{cell.replace('.', '')}_longer"
        values[key], values[f"{key}_k"] = spread([math.exp(v) for v in x], ".2f"), o.k_of_n()
        text = f"{CELLS[cell]}, decay off lengthens the target rows more than the control's ({window:,} steps)"
        evidence = f"{o.k_of_n('seeds more')}; (off / on in the cell) / (off / on in the control): {values[key]}"
        parts.append(part(text, o, evidence))
    values["table"] = "\n" + table(fs) + "\n"  # a Markdown table starts on a line of its own
    head = f"decay off − on, one pair at r = 1, targets after {window:,} steps: {values.get(f'm1_r1_{window}_change')}"
    k = accuracy_outcome(pairs(fs, "m1_r1", window), False).k_of_n()
    return Reading(parts, head, k, f"{n_seeds(group)} × 1 ({group.base.data.op})", values)


CLAIM = Claim(
    "decouple_decay",
    "",
    "Where decay's sign turns (ours, §4.2, eqs. 3-6): the target rows' decay off with W training",
    "decouple_decay",
    "partly",
    "with W training, decay off raises every starved cell's targets after 500 steps; after 5,000, one pair at "
    "matched draws falls ({m1_matched_5000_k} seeds) while r = 0.01 and one pair at r = 1 still rise",
    read=decouple_decay,  # the parts, fixed before the data: SIGN above
    ours=True,
    tail=1,
    metrics="val_acc_target,target_norm,val_acc",
    tables=("interventions",),
    row=195,
)
