"""Study: the draw deficit and lazy rows on add, sub and div (ours, §4.2): does mul's finding reach the other tasks?"""

from __future__ import annotations

import math
from collections.abc import Sequence

from engine.claims.cause_pairs import TOL, _costs_nothing, _pooled
from engine.claims.claim import Claim
from engine.claims.readings import Reading, beside, direction, n_seeds, part, spread
from engine.claims.recipes import CELLS, RECIPES, Obs, Pairs, observe, pair_up, reach
from engine.claims.verdicts import GUARD, UNREAD, Outcome, Part
from engine.records.group_dir import Group

TASKS = ("add", "sub", "div")  # the preset's; an arm is OP_r0.01 or OP_r0.01_lazy
MUL = "adam"  # cure_decouple's arms (mul), kept beside: shown in the table, read on their own page
CELL = "r0.01"


def gaps(obs: Sequence[Obs], prefix: str, cell: str = CELL) -> list[float]:
    """The plain arm's targets minus the common tokens of the same run, by seed: the deficit within a member."""
    out = []
    for o in sorted(obs, key=lambda o: o.seed):
        if o.arm == f"{prefix}_{cell}":
            x, y = o.values.get("val_acc_target", math.nan), o.values.get("val_acc_common", math.nan)
            if math.isfinite(x) and math.isfinite(y):
                out.append(x - y)
    return out


def deficit_part(op: str, d: list[float], want: int, cell: str = CELL) -> Part:
    text = f"on {op} {CELLS[cell]}, the plain arm's targets end more than {TOL:g} below the common tokens of the run"
    if len(d) < want:
        return Part(text, UNREAD, f"unread: {len(d)} of {want} seeds ended")
    o = Outcome([x < -TOL for x in d], [x > 0 for x in d])
    return part(text, o, f"{o.k_of_n('seeds')}; targets − common: {spread(d, sign=True)}")


def gain_part(op: str, p: Pairs | None, want: int, cell: str = CELL, recipe: str = "lazy") -> Part:
    name = RECIPES[recipe][1]
    text = f"on {op} {CELLS[cell]}, {name} {'raise' if name.endswith('rows') else 'raises'} the targets' accuracy"
    if p is None or len(p.pairs) < want:
        return Part(text, UNREAD, f"unread: {0 if p is None else len(p.pairs)} of {want} seeds ended")
    d = p.changes("val_acc_target")
    o = direction(d, True)
    return part(text, o, f"{o.k_of_n('pairs higher')}; change: {spread(d, sign=True)}")


def table(obs: Sequence[Obs], ps: dict[str, Pairs]) -> str:
    """Tasks against the plain arm and lazy rows at r = 0.01: mean (range, n) over seeds."""
    lines = [
        "| task | seeds | targets' val acc, plain | common, plain | targets − common | lazy rows' change | higher | "
        "common change | val acc change | 95% val, plain → lazy |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for prefix in (*TASKS, MUL):
        p = ps.get(prefix)
        if p is None:
            continue
        d = p.changes("val_acc_target")
        lines.append(
            f"| {'mul' if prefix == MUL else prefix} | {len(p.pairs)} | {spread(p.side('val_acc_target', 0))} | "
            f"{spread(p.side('val_acc_common', 0))} | {spread(gaps(obs, prefix), sign=True)} | "
            f"{spread(d, sign=True)} | {sum(x > 0 for x in d)}/{len(d)} | "
            f"{spread(p.changes('val_acc_common'), sign=True)} | {spread(p.changes('val_acc'), sign=True)} | "
            f"{reach(p, '/')} |"
        )
    return "\n".join(lines)


def recipe_tasks(group: Group) -> Reading:
    """Issue 53, question (e), the tasks. The claim, fixed before the data: on each of add, sub and div at
    r = 0.01, the plain arm's targets end more than 0.01 below the common tokens of the same run in every
    seed (the draw deficit, read within the member: the preset has no r = 1 control), lazy rows raise them in
    every seed, and lazy rows cost the common tokens nothing. mul's arms (cure_decouple, kept beside) are
    shown in the table; they are read on cure_decouple's page."""
    obs, bad = observe(group)
    mul = beside(group, "cure_decouple")
    if mul is not None:
        obs += [o for o in observe(mul)[0] if o.arm in (f"{MUL}_{CELL}", f"{MUL}_{CELL}_lazy")]
    want = n_seeds(group)
    ps = {prefix: p for prefix in (*TASKS, MUL) if (p := pair_up(obs, prefix).get((CELL, "lazy"))) is not None}
    parts = []
    for op in TASKS:
        parts += [deficit_part(op, gaps(obs, op), want), gain_part(op, ps.get(op), want)]
    common = [x for op in TASKS if op in ps for x in ps[op].changes("val_acc_common")]
    text = f"lazy rows cost the common tokens less than {TOL:g} on the three tasks"
    if sum(len(ps[op].pairs) for op in TASKS if op in ps) < want * len(TASKS):
        parts.append(Part(text, UNREAD, "unread: not every seed of every task has ended", role=GUARD))
    else:
        o = _costs_nothing(common)
        parts.append(part(text, o, f"{o.k_of_n('pairs')}; change, pooled: {_pooled(common)}", role=GUARD))
    v: dict[str, str] = {"table": "\n" + table(obs, ps) + "\n", "mismatched": str(bad)}
    for prefix, p in ps.items():
        key = "mul" if prefix == MUL else prefix
        d = p.changes("val_acc_target")
        v[f"{key}_lazy_target"] = spread(d, sign=True)
        v[f"{key}_lazy_target_k"] = f"{sum(x > 0 for x in d)} of {len(d)}"
        g = gaps(obs, prefix)
        v[f"{key}_gap"] = spread(g, sign=True)
        v[f"{key}_gap_k"] = f"{sum(x < -TOL for x in g)} of {len(g)}"
    gains = [x for op in TASKS if op in ps for x in ps[op].changes("val_acc_target")]
    head = f"lazy rows − plain, targets at r = 0.01 on add, sub, div: {_pooled(gains)}"
    k = f"{sum(x > 0 for x in gains)} of {len(gains)} pairs higher"
    return Reading(parts, head, k, f"{want} × {len(TASKS)} ({', '.join(TASKS)})", v)


CLAIM = Claim(
    "recipe_tasks",
    "",
    "The draw deficit on add, sub and div (ours, §4.2): lazy rows at r = 0.01",
    "recipe_tasks",
    "supported",
    "lazy rows lift the targets at r = 0.01 in {add_lazy_target_k} pairs on add, {sub_lazy_target_k} on sub, "
    "{div_lazy_target_k} on div, each below its run's common tokens in every seed; common tokens unharmed",
    read=recipe_tasks,
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("decoupling targets",),
    row=221,
)
