"""Study: The paper's fixes on the token-starved split, mul and add (ours)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.claims.claim import Claim
from engine.claims.fix_pairs import C_KEYS, _c_logged, _members, _mismatch, _none, _pairs
from engine.claims.readings import (
    Reading,
    Row,
    beside,
    budget_of,
    direction,
    generalized,
    median,
    part,
    rows,
    select,
    sooner,
    spread,
    steps,
)
from engine.claims.verdicts import HOLDS, UNREAD, Part
from engine.config import ConfigError
from engine.records.group_dir import Group
from engine.rundir import read_metrics
from engine.rundir.keep import read_provenance
from engine.sweep.report.tables import member_finals

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


CLAIM = Claim(
    "fixes",
    "",
    "The paper's fixes on the token-starved split, mul and add (ours)",
    "skew_fixes_mul",
    "partly",
    "final val accuracy higher in every seed only for {held}; on mul the best fix, {mul_best}, is higher "
    "than Adam in {mul_best_k} seeds",
    figure="fixes_mul",
    ours=True,
    tables=("every cell", "final value"),
    read=fixes,
    row=230,
    paper=2,
    plan="2, 3: Adam-LR and the samplers on the token-starved split (§4.2-4.3, App. A)",
)
