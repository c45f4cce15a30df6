"""The fixes' readings: adaptive Adam-LR (Prop. 4.1, eq. 24) and the paper's fixes on the token-starved split (ours).

`adaptive` reads fig6_adaptive: each reading of "adaptive" c against plain Adam per task and against the fixed
c = 10, steps to 95% val paired by seed. `fixes` reads skew_fixes_mul and the skew_fixes_add group kept beside
it (docs/data/): each fix's final val accuracy against plain Adam, the two samplers' also against their control
(uniform draws with replacement), paired by seed. A pair is read only where the two members' configs differ in
the factor the contrast names; a pair that differs in more is left out and fails a part of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from engine.config import ConfigError
from engine.rundir.dirs import read_metrics
from engine.rundir.keep import read_provenance
from engine.sweep.report.readings import (
    Reading,
    Row,
    beside,
    budget_of,
    direction,
    generalized,
    geo_ratio,
    median,
    paired_alone,
    part,
    rows,
    select,
    sooner,
    spread,
    steps,
)
from engine.sweep.report.tables import member_finals
from engine.sweep.report.verdicts import HOLDS, UNREAD, Outcome, Part
from engine.sweep.spec import Group
from engine.sweep.stats import range_text

# --- pairs that differ in the named factor alone ----------------------------------------------------


def _pairs(group: Group, a: Sequence[Row], b: Sequence[Row], keys: Sequence[str]) -> tuple[list[Row], list[Row], int]:
    """`a` and `b` paired by seed where the two differ in `keys` alone, and how many pairs differ in more."""
    ps, bad = paired_alone(group, a, b, keys)
    return [x for x, _ in ps], [y for _, y in ps], bad


def no_later(a: Sequence[Row], b: Sequence[Row]) -> Outcome:
    """Does arm `a` reach 95% val no later than arm `b`, paired by seed? A tie agrees (both reached at the same
    evaluation, the steps' grain); only `a` reached agrees, only `b` is against, neither cannot tell."""
    return sooner(a, b, tie_agrees=True)[0]


def _ops(group: Group) -> list[str]:
    return [str(v) for v in group.spec.grid.get("data.op", [group.base.data.op])]


def _none(text: str, what: str) -> Part:
    """A contrast with no pair to read: every pair differs in more than `what`."""
    return Part(text, UNREAD, f"no pair of seeds differs in {what} alone")


def _mismatch(n: int, what: str) -> Part:
    return Part(f"the arms differ in {what} alone", "fails", f"{n} pairs differ in more; left out of every other part")


# --- adaptive Adam-LR: fig6_adaptive -----------------------------------------------------------------

C_KEYS = ("optim.lr_ratio", "optim.adaptive", "optim.adaptive_once", "optim.adaptive_every")  # how c is set
BASE, FIXED = "adam", "c10"
READINGS = (  # (arm, key in the values, words): the two readings of "adaptive" (engine/train/adaptive.py)
    ("adaptive_once", "once", "c computed once"),
    ("adaptive_every", "every", "c recomputed"),
)


def _c_logged(group: Group, rs: Sequence[Row]) -> tuple[dict[str, list[float]], int, int]:
    """From metrics.csv's `lr_ratio` (the c a member trained with) after step 0: each member's first, lowest,
    highest and last c; how many members logged `c_raw` (eq. 24 before the clamp) and how many of them were ever
    clamped."""
    cs: dict[str, list[float]] = {"first": [], "low": [], "high": [], "last": []}
    logged = clamped = 0
    for r in rs:
        evals = [e for e in read_metrics(group.member_dir(r.member)) if e["step"] > 0 and "lr_ratio" in e]
        c = [e["lr_ratio"] for e in evals if math.isfinite(e["lr_ratio"])]
        if c:
            cs["first"].append(c[0])
            cs["low"].append(min(c))
            cs["high"].append(max(c))
            cs["last"].append(c[-1])
        raw = [(e["c_raw"], e["lr_ratio"]) for e in evals if math.isfinite(e.get("c_raw", math.nan))]
        if raw:
            logged += 1
            clamped += any(not math.isclose(x, y, rel_tol=1e-6) for x, y in raw)
    return cs, logged, clamped


def _members(xs: Sequence[float], f: str = ".2f") -> str:
    """Values that are not independent seeds (a seed's c is the same on every task): their median and range."""
    if not xs:
        return "-"
    return f"{median(xs):{f}} ({range_text(min(xs), max(xs), f)}, {len(xs)} members)"


def adaptive(group: Group) -> Reading:
    """Prop. 4.1 and eq. 24 (§4.3, App. B) with Fig. 6's caption: the adaptive ratio c = η_E/η_W ∝
    σmax(E)/σmax(W) · f_W/f_E accelerates convergence. Per task, each reading of "adaptive" (c computed once at
    step 0, c recomputed during training) reaches 95% val in fewer steps than plain Adam, paired by seed; and,
    pooled over the tasks, no later than the fixed c = 10 that §4.3 sets in its place ("in practice, we set
    c = 10"). The arms of a pair differ in how c is set alone."""
    rs = rows(group)
    ops = _ops(group)
    parts: list[Part] = []
    values: dict[str, str] = {}
    bad = 0
    for arm, key, words in READINGS:
        held, agree, ratios = [], [], []
        for op in ops:
            a, b, n = _pairs(group, select(rs, arm, data__op=op), select(rs, BASE, data__op=op), C_KEYS)
            bad += n
            text = f"{words}: sooner than Adam on {op}"
            if not a:
                parts.append(_none(text, "how c is set"))
                continue
            o, both, _ = sooner(a, b)
            agree += list(o.agree)
            ratios += both
            note = f"; steps over Adam's where both reached {geo_ratio(both)}" if both else ""
            parts.append(part(text, o, f"{o.k_of_n('seeds fewer steps')}{note}"))
            if o.state == HOLDS:
                held.append(op)
        fixed_agree: list[bool | None] = []
        fixed_opp: list[bool] = []
        by_task = []
        for op in ops:
            a, b, n = _pairs(group, select(rs, arm, data__op=op), select(rs, FIXED, data__op=op), C_KEYS)
            bad += n
            o = no_later(a, b)
            fixed_agree += list(o.agree)
            fixed_opp += list(o.opposite)
            by_task.append(f"{op} {o.k_of_n()}")
        fixed = Outcome(fixed_agree, fixed_opp)
        text = f"{words}: no later than c = 10"
        if fixed_agree:
            parts.append(part(text, fixed, f"{fixed.k_of_n('pairs no later')} over the tasks ({', '.join(by_task)})"))
        else:
            parts.append(_none(text, "how c is set"))
        mine = select(rs, arm)
        values |= {
            f"{key}_on": ", ".join(held) or "no task",
            f"{key}_not": ", ".join(op for op in ops if op not in held) or "none",
            f"{key}_k": Outcome(agree).k_of_n(),
            f"{key}_ratio": geo_ratio(ratios),
            f"{key}_c10_k": fixed.k_of_n(),
            f"{key}_reach": generalized(mine),
        }
        cs, logged, clamped = _c_logged(group, mine)
        values |= {f"{key}_c_{k}": _members(v) for k, v in cs.items()}
        values[f"{key}_clamped"] = f"{clamped} of {logged}"
    if bad:
        parts.append(_mismatch(bad, "how c is set"))
    c10_agree, c10_both = [], []
    for op in ops:
        o, both, _ = sooner(select(rs, FIXED, data__op=op), select(rs, BASE, data__op=op))
        c10_agree += list(o.agree)
        c10_both += both
    unfit = [r for r in rs if not r.raw.get("memorized_step")]
    values |= {
        "c10_k": Outcome(c10_agree).k_of_n(),
        "c10_ratio": geo_ratio(c10_both),
        "adam_reach": generalized(select(rs, BASE)),
        "c10_reach": generalized(select(rs, FIXED)),
        "unfit": ", ".join(
            f"{r.member.arm} on {r.member.values.get('data.op', '')} (seed {r.member.seed})" for r in unfit
        )
        or "none",
        "budget": budget_of(rs),
    }
    head = (
        f"steps to 95% val over Adam's, pairs where both reached: c once {values['once_ratio']}, "
        f"recomputed {values['every_ratio']}, c = 10 {values['c10_ratio']}"
    )
    k = f"sooner than Adam: c once {values['once_k']}, recomputed {values['every_k']} pairs"
    return Reading(parts, head, k, f"{len(group.spec.seeds)} × {len(ops)} ({', '.join(ops)})", values)


# --- the paper's fixes on the token-starved split: skew_fixes_mul and skew_fixes_add -------------------

TWIN = "skew_fixes_add"  # kept beside skew_fixes_mul in docs/data/: the same fixes on add
TAIL = 5  # a member's final value: the mean of its last TAIL evaluations (the claim's `grok report --tail`)
RISE = 0.8  # the figure's rise: the first evaluation at this val accuracy (a description, not a part)
SAMPLER = ("train.sampler",)
FIXES = (  # (arm, words, the factor it moves, its controls): a part per task, fix and control
    ("adamlr_c10", "Adam-LR (c = 10)", C_KEYS, ("adam",)),
    ("adaptive", "adaptive Adam-LR", C_KEYS, ("adam",)),
    ("balanced", "the balanced sampler", SAMPLER, ("replacement", "adam")),
    ("gradient", "the gradient sampler", SAMPLER, ("replacement", "adam")),
    ("balanced_epochs", "balanced epochs", SAMPLER, ("adam",)),
)
CONTROLS = {"adam": "plain Adam", "replacement": "its control (draws with replacement)"}
SHORT = {"adam": "Adam", "replacement": "its control"}


def _median_step(rs: Sequence[Row]) -> str:
    """The median of the rows' steps (`gen`) where they have one; "-" where none has."""
    xs = [r.gen for r in rs if r.gen is not None]
    return steps(median(xs)) if xs else "-"


def _risen(group: Group, rs: Sequence[Row]) -> list[Row]:
    """The rows with `gen` replaced by the first step at RISE val accuracy (None: never)."""
    out = []
    for r in rs:
        at = next((e["step"] for e in read_metrics(group.member_dir(r.member)) if e.get("val_acc", 0) >= RISE), None)
        out.append(replace(r, gen=at))
    return out


def _fix_task(
    group: Group, parts: list[Part], values: dict[str, str], held: dict[str, list[str]]
) -> tuple[int, dict[str, float]]:
    """One task's parts (appended to `parts`), values (keys start with the task) and the controls each fix is
    above in every seed (`held`, "the balanced sampler on add" -> ["its control", "Adam"]); the pairs that differ
    in more, and each fix's mean change of final val accuracy against plain Adam."""
    op = group.base.data.op
    rs = rows(group)
    finals = member_finals(group, ["val_acc", "val_acc_rare", "val_acc_common"], TAIL)

    def change(a: Sequence[Row], b: Sequence[Row], k: str) -> list[float]:
        return [finals[x.member.id][k] - finals[y.member.id][k] for x, y in zip(a, b, strict=True)]

    bad = 0
    gain: dict[str, float] = {}
    arms = group.spec.arms
    for arm, words, keys, controls in FIXES:
        if arm not in arms:
            continue
        for ctl in (c for c in controls if c in arms):
            a, b, n = _pairs(group, select(rs, arm), select(rs, ctl), keys)
            bad += n
            text = f"{op}: {words} above {CONTROLS.get(ctl, ctl)}"
            if not a:
                parts.append(_none(text, "the fix"))
                continue
            d, dr = change(a, b, "val_acc"), change(a, b, "val_acc_rare")
            o = direction(d)
            if ctl == "adam" and d:
                gain[arm] = sum(d) / len(d)
            key = f"{op}_{arm}_{ctl}"
            values[key], values[f"{key}_k"] = spread(d, sign=True), o.k_of_n()
            values[f"{key}_rare"], values[f"{key}_rare_k"] = spread(dr, sign=True), direction(dr).k_of_n()
            values[f"{key}_common"] = spread(change(a, b, "val_acc_common"), sign=True)
            parts.append(
                part(
                    text,
                    o,
                    f"{o.k_of_n('seeds higher')}; final val accuracy {values[key]}; "
                    f"rare tokens {values[key + '_rare']}",
                )
            )
            if parts[-1].state == HOLDS:
                held.setdefault(f"{words} on {op}", []).append(SHORT.get(ctl, ctl))
    if "replacement" in arms and "adam" in arms:  # what drawing with replacement costs by itself: a value
        a, b, _ = _pairs(group, select(rs, "replacement"), select(rs, "adam"), SAMPLER)
        for k, name in (("val_acc", ""), ("val_acc_rare", "_rare")):
            d = change(a, b, k)
            values[f"{op}_replacement_adam{name}"] = spread(d, sign=True)
            values[f"{op}_replacement_adam{name}_k"] = direction(d).k_of_n()
    for arm in arms:
        mine = select(rs, arm)
        values[f"{op}_{arm}_reach"] = generalized(mine)
        values[f"{op}_{arm}_val"] = spread([finals[r.member.id]["val_acc"] for r in mine])
        values[f"{op}_{arm}_rare"] = spread([finals[r.member.id]["val_acc_rare"] for r in mine])
    adam = _risen(group, select(rs, "adam"))
    values[f"{op}_adam_rise"] = _median_step(adam)
    for arm in ("adamlr_c10", "adaptive"):
        if arm in arms:
            mine = _risen(group, select(rs, arm))
            o, _, _ = sooner(mine, adam)
            values[f"{op}_{arm}_rise_k"] = o.k_of_n()
            values[f"{op}_{arm}_rise"] = _median_step(mine)
    if "adaptive" in arms:
        cs, _, _ = _c_logged(group, select(rs, "adaptive"))
        values |= {f"{op}_adaptive_c_{k}": _members(v) for k, v in cs.items()}
    values[f"{op}_budget"] = budget_of(rs)
    return bad, gain


def fixes(group: Group) -> Reading:
    """§4.2-4.3 and App. A (ours): do the paper's fixes lift the token-starved split's plateau? Each fix's final
    val accuracy against plain Adam, paired by seed, on the group's task and on the twin kept beside it: Adam-LR
    (c = 10, §4.3), adaptive Adam-LR (Prop. 4.1, eq. 24), the balanced sampler (eq. 10) and the gradient sampler
    (eq. 19), each also against uniform draws with replacement (they draw with replacement, the plain shuffle
    does not), and balanced epochs (eq. 10's weights without replacement)."""
    parts: list[Part] = []
    values: dict[str, str] = {}
    groups = [group]
    twin = beside(group, TWIN)
    if twin is not None:
        groups.append(twin)
    bad = 0
    best: dict[str, str] = {}  # per task, the fix with the largest mean change against plain Adam
    held: dict[str, list[str]] = {}
    for g in groups:
        n, gain = _fix_task(g, parts, values, held)
        bad += n
        best[g.base.data.op] = max(gain, key=lambda a: gain[a]) if gain else "-"
    if twin is None:
        parts.append(Part(f"the fixes on {TWIN}'s task", UNREAD, f"no kept {TWIN} group beside this one"))
    else:
        try:
            p = read_provenance(twin.dir)
            values["twin_kept"] = f"{p.ended} of {p.members} members ended; commit {p.commit}; {p.machine}"
        except ConfigError:
            values["twin_kept"] = "not a kept group"
    if bad:
        parts.append(_mismatch(bad, "the fix"))
    values["held"] = "; ".join(f"{fix} (above {' and '.join(c)})" for fix, c in held.items()) or "no fix"
    ops = list(best)
    for op, arm in best.items():
        values[f"{op}_best"], values[f"{op}_best_k"] = arm, values.get(f"{op}_{arm}_adam_k", "-")
    head = "final val accuracy, best fix − plain Adam: " + "; ".join(
        f"{op} {best[op]} {values.get(f'{op}_{best[op]}_adam', '-')}" for op in ops
    )
    k = "; ".join(f"{op} {best[op]} {values.get(f'{op}_{best[op]}_adam_k', '-')} seeds higher" for op in ops)
    return Reading(parts, head, k, f"{len(group.spec.seeds)} × {len(ops)} ({', '.join(ops)})", values)
