"""The cause study's readings (§4.2, eqs. 3-6; ours): what shortens a starved row of E, and what its
direction carries. Each part is checked pair by pair from the kept group (engine/sweep/report/readings.py);
values pooled over cells and seeds are a mean with its range, never an interval (the cells are not seeds).
"""

from __future__ import annotations

import math

from engine.sweep.report.cures import CurePairs, cure_metrics, cure_pairs
from engine.sweep.report.readings import Reading, direction, generalized, part, rows, spread
from engine.sweep.report.verdicts import Outcome
from engine.sweep.spec import Group
from engine.sweep.stats import range_text


def _tasks(group: Group) -> str:
    return f"{len(group.spec.seeds)} × 1 ({group.base.data.op})"


DIRECTIONS = (  # decouple_direction's fork arms (presets/decouple_direction.toml): the direction each row is given
    ("rescaled", "in its own direction", True),
    ("turned_random", "in a random direction", False),
    ("turned_other", "in another token's direction", False),
    ("turned_memorized", "in its direction at memorization", False),
)


def _pooled(xs: list[float]) -> str:
    """Values pooled over cells and seeds: their mean and range (a t-interval would treat cells as seeds)."""
    if not xs:
        return "-"
    text = f"{sum(xs) / len(xs):.3f} ({range_text(min(xs), max(xs), '.3f')}, n = {len(xs)})"
    return text.replace("-", "−")  # the minus sign of every other reading (readings.spread)


def decouple_direction(group: Group) -> Reading:
    """§4.2 (ours, issue 43 item 4): a starved target row set at the ring's radius, one frozen step: does it
    recover in its own direction and in no other? Each fork against its parent at the fork step, per seed."""
    from engine.sweep.report.tables import member_finals

    finals = member_finals(group, ["val_acc_target"], 1)
    at = {m.id: f["val_acc_target"] for m in group.members if (f := finals.get(m.id)) and "val_acc_target" in f}
    parts, values, after_own = [], {}, []
    for suffix, name, rises in DIRECTIONS:
        forks = [m for m in group.members if m.fork_of and m.arm.endswith("_" + suffix) and m.id in at]
        pairs = [(at[m.fork_of], at[m.id]) for m in forks if m.fork_of in at]
        o = direction([b - a for a, b in pairs], rises)
        after = [b for _, b in pairs]
        values[suffix] = _pooled(after)
        values[f"{suffix}_k"] = o.k_of_n("pairs")
        if rises:
            after_own = after
        word = "rises" if rises else "falls"
        parts.append(
            part(f"the targets' accuracy {word} {name}", o, f"{o.k_of_n('pairs')}; after, pooled: {_pooled(after)}")
        )
    values["chance"] = f"{1 / group.base.data.p:.3f}"
    head = (
        f"targets' val accuracy one frozen step after: own direction {values['rescaled']}, random "
        f"{values['turned_random']} (chance {values['chance']})"
    )
    n = sum(1 for m in group.members if m.fork_of and m.arm.endswith("_rescaled") and m.id in at)
    return Reading(
        parts, head, f"{sum(v > 0.5 for v in after_own)} of {n} own-direction pairs above 0.5", _tasks(group), values
    )


FACTORS_READ = (  # (factor, what moving it alone from the starved arm does, in a part's words)
    ("decay", "decay off raises the targets' accuracy"),
    ("draws", "more draws raise the targets' accuracy"),
    ("pairs", "more pairs raise the targets' accuracy"),
)
CELLS = {  # decouple_cause's starved cells (the parent arm without its optimizer), in a part's words
    "r0.01": "at r = 0.01",
    "m1_r1": "with one pair at r = 1",
    "m1_matched": "with one pair at matched draws",
    "m3_r1": "with three pairs at r = 1",
}


def _cell(parent: str) -> str:
    """The cell of a parent arm: `adam_m1_r1` and `sgd_m1_r1` are both `m1_r1`."""
    return parent.split("_", 1)[1] if "_" in parent else parent


def _rescaled_pull(group: Group) -> list[float]:
    """Per parent arm and seed: the target norm after 500 steps of the rows rescaled to the ring's radius, with
    their decay off minus on (rescaled_500_nowd − rescaled_500)."""
    from engine.sweep.report.factorial import window

    res = group.results()
    ended = [m for m in group.members if m.fork_of and m.id in res and res[m.id].ended]
    on = {(m.fork_of, m.seed): m for m in ended if m.arm.endswith("_rescaled_500")}
    out = []
    for m in ended:
        if m.arm.endswith("_rescaled_500_nowd") and (a := on.get((m.fork_of, m.seed))) is not None:
            wa, wb = window(group, a), window(group, m)
            if wa is not None and wb is not None:
                x, y = wa.outcomes["target_norm"], wb.outcomes["target_norm"]
                if math.isfinite(x) and math.isfinite(y):
                    out.append(y - x)
    return out


STARVED = "own_own_wd"  # the arm that keeps the parent's pairs, draws and decay: each factor is moved from it
ROOM = 0.95  # an accuracy part reads the pairs whose starved arm ends below this: room to rise
MIN_ROOM = 3  # and is read where at least this many pairs have room (a cell at its ceiling is unread)


def decouple_factorial(group: Group) -> Reading:
    """§4.2, eqs. 3-6 (ours, issue 43 items 3 and 6): the target rows alone train 500 steps from a starved parent.
    Each factor is moved alone from the starved arm (own pairs, own draws, decay on), paired by seed, and read
    only where the realized draws say the two arms differ in that factor alone (`matched`). The rows' norm is
    read over every cell; the targets' accuracy per cell (Adam and SGD pooled), on the pairs with room to rise
    (the starved arm below ROOM): a cell and factor with fewer than MIN_ROOM such pairs is listed as unread,
    not as a part.
    Every other contrast is in the report's table."""
    from engine.sweep.report.factorial import contrasts

    cs = [c for c in contrasts(group) if c.a.endswith("_" + STARVED)]
    norm = [
        wb.outcomes["target_norm"] - wa.outcomes["target_norm"]
        for c in cs
        if c.factor == "decay" and c.matched
        for wa, wb in c.pairs
    ]
    norm = [x for x in norm if math.isfinite(x)]
    o = direction(norm, True)
    values = {"decay_target_norm": _pooled(norm), "decay_target_norm_k": o.k_of_n("pairs")}
    parts = [
        part("decay off lengthens the target rows", o, f"{o.k_of_n('pairs higher')}; change, pooled: {_pooled(norm)}")
    ]
    unread = []
    for cell in dict.fromkeys(_cell(c.parent) for c in cs):
        for factor, text in FACTORS_READ:
            mine = [c for c in cs if _cell(c.parent) == cell and c.factor == factor]
            pairs = [
                (wa.outcomes["val_acc_target"], wb.outcomes["val_acc_target"])
                for c in mine
                if c.matched
                for wa, wb in c.pairs
            ]
            d = [y - x for x, y in pairs if math.isfinite(x) and math.isfinite(y) and x < ROOM]
            key, where = f"{cell.replace('.', '')}_{factor}", CELLS.get(cell, cell)  # a note's {key}: no dots
            if len(d) < MIN_ROOM:
                matched = any(c.matched for c in mine)
                why = f"room to rise in {len(d)} of {len(pairs)} pairs" if matched else "draws not as the factor names"
                unread.append(f"{factor} {where} ({why})")
                continue
            oc = direction(d, True)
            values[key], values[f"{key}_k"] = _pooled(d), oc.k_of_n("pairs")
            parts.append(part(f"{where}, {text}", oc, f"{oc.k_of_n('pairs higher')}; change, pooled: {_pooled(d)}"))
    d = _rescaled_pull(group)
    o = direction(d, True)
    values["rescaled_norm"], values["rescaled_norm_k"] = _pooled(d), o.k_of_n("pairs")
    parts.append(
        part(
            "a rescaled row keeps its length without decay (what pulls it back is decay)",
            o,
            f"{o.k_of_n('pairs longer without decay')}; target norm after 500 steps, no decay − decay, pooled: "
            f"{_pooled(d)}",
        )
    )
    values["unread"] = "; ".join(unread) or "none"
    head = f"from the starved arm, decay off: target norm {values['decay_target_norm']}"
    return Reading(parts, head, f"decay off: norm up in {values['decay_target_norm_k']}", _tasks(group), values)


TOL = 0.01  # a cure "costs nothing" where it lowers an accuracy by less than this, pair by pair
CONTROL = "adam_r1"  # cure_decouple's control cell: every target pair drawn at the ordinary rate


def _costs_nothing(d: list[float]) -> Outcome:
    """Per pair: the cure's change is not a loss of TOL or more (opposite: it is)."""
    return Outcome([x > -TOL for x in d], [x <= -TOL for x in d])


def _cure_values(cs: list[CurePairs], metric: str) -> dict[str, str]:
    """Each cure arm's paired change of `metric` (mean (range, n)) and k of n higher, keyed by the arm."""
    out = {}
    for c in cs:
        d = c.changes(metric)
        arm = c.arm.replace(".", "")  # a note's {key}: no dots
        out[arm] = spread(d, sign=True)
        out[f"{arm}_k"] = f"{sum(x > 0 for x in d)} of {len(d)}"
        out[f"{arm}_reach"] = f"{sum(x for x, _ in c.reached)} → {sum(y for _, y in c.reached)} of {len(c.reached)}"
    return out


def cure_decouple(group: Group) -> Reading:
    """§4.2-4.3 (ours, issue 43 item 5): a cure from step 0 on decouple_paper's starved cells, each cure against
    its own cell paired by seed (engine/sweep/report/cures.py). The claim is lazy rows': they raise the starved
    targets and cost neither the common tokens nor the control (r = 1). The other cures are the table's."""
    from engine.sweep.report.tables import member_finals

    cs = cure_pairs(group, member_finals(group, cure_metrics(group), 5))
    lazy = [c for c in cs if c.cure == "lazy"]
    starved = [c for c in lazy if c.cell != CONTROL]
    control = [c for c in lazy if c.cell == CONTROL]
    d_target = [x for c in starved for x in c.changes("val_acc_target")]
    d_common = [x for c in starved for x in c.changes("val_acc_common")]
    d_control = [x for c in control for x in c.changes("val_acc")]
    parts = []
    for c in starved:  # one part per starved cell: a cure that works in one cell and not another says so
        d = c.changes("val_acc_target")
        o = direction(d, True)
        where = CELLS.get(_cell(c.cell), c.cell)
        parts.append(
            part(
                f"{where}, lazy rows raise the targets' accuracy",
                o,
                f"{o.k_of_n('pairs higher')}; change: {spread(d, sign=True)}",
            )
        )
    o2, o3 = _costs_nothing(d_common), _costs_nothing(d_control)
    parts += [
        part(
            f"lazy rows cost the common tokens less than {TOL:g} in the starved cells",
            o2,
            f"{o2.k_of_n('pairs')}; change, pooled: {_pooled(d_common)}",
        ),
        part(
            f"lazy rows cost the control (r = 1) less than {TOL:g} of val accuracy",
            o3,
            f"{o3.k_of_n('pairs')}; change: {spread(d_control, sign=True)}",
        ),
    ]
    o1 = direction(d_target, True)
    values = {f"target_{k}": v for k, v in _cure_values(cs, "val_acc_target").items()}
    values |= {f"norm_{k}": v for k, v in _cure_values(cs, "target_norm").items()}
    values |= {f"val_{k}": v for k, v in _cure_values(cs, "val_acc").items()}
    values["lazy_target"] = _pooled(d_target)
    head = f"lazy rows − untreated, the starved targets' val accuracy: {values['lazy_target']}"
    return Reading(parts, head, f"{o1.k_of_n('pairs higher')}", _tasks(group), values)


def cure_skew_mul(group: Group) -> Reading:
    """§4.1-4.3 (ours, issue 43 item 5) on skew_fixes_mul's split: each cure against plain Adam (`compare`),
    paired by seed; the rare tokens' rows are the starved ones (no token is a target). The claim is lazy rows':
    they raise the rare tokens' accuracy and cost the common tokens nothing."""
    from engine.sweep.report.tables import member_finals

    finals = member_finals(group, ["val_acc_rare", "val_acc_common", "val_acc"], 5)
    arm_of: dict[str, dict[int, dict[str, float]]] = {}
    for m in group.members:
        if m.id in finals:
            arm_of.setdefault(m.arm, {})[m.seed] = finals[m.id]
    base = arm_of.get(group.spec.compare or "adam", {})

    def change(arm: str, k: str) -> list[float]:
        mine = arm_of.get(arm, {})
        return [mine[s][k] - base[s][k] for s in sorted(mine) if s in base and k in mine[s] and k in base[s]]

    rare, common = change("lazy", "val_acc_rare"), change("lazy", "val_acc_common")
    o1, o2 = direction(rare, True), _costs_nothing(common)
    parts = [
        part(
            "lazy rows raise the rare tokens' accuracy",
            o1,
            f"{o1.k_of_n('seeds higher')}; change: {spread(rare, sign=True)}",
        ),
        part(
            f"lazy rows cost the common tokens less than {TOL:g}",
            o2,
            f"{o2.k_of_n('seeds')}; change: {spread(common, sign=True)}",
        ),
    ]
    values: dict[str, str] = {}
    for arm in arm_of:
        if arm == (group.spec.compare or "adam"):
            continue
        for k in ("val_acc_rare", "val_acc_common", "val_acc"):
            d = change(arm, k)
            values[f"{arm}_{k}"] = spread(d, sign=True)
            values[f"{arm}_{k}_k"] = f"{sum(x > 0 for x in d)} of {len(d)}"
    res = {r.member.id: r for r in rows(group)}
    for arm in arm_of:
        ms = [m for m in group.members if m.arm == arm and m.id in res]
        values[f"{arm}_reach"] = generalized([res[m.id] for m in ms])
    values["adam_rare"] = spread([v["val_acc_rare"] for v in base.values() if "val_acc_rare" in v])
    values["lazy_rare"] = spread([v["val_acc_rare"] for v in arm_of.get("lazy", {}).values() if "val_acc_rare" in v])
    head = f"rare tokens' val accuracy, lazy rows {values['lazy_rare']} against Adam {values['adam_rare']}"
    return Reading(parts, head, o1.k_of_n("seeds higher"), _tasks(group), values)
