"""Study: the one-pair deficit on add, sub and div (ours, §4.2), with lazy rows and decay only when drawn."""

from __future__ import annotations

from engine.claims.cause_pairs import TOL, _costs_nothing, _pooled
from engine.claims.claim import Claim
from engine.claims.readings import Reading, beside, n_seeds, part, spread
from engine.claims.recipes import Pairs, observe, pair_up, reach
from engine.claims.studies.recipe_tasks import TASKS, deficit_part, gain_part, gaps
from engine.claims.verdicts import GUARD, UNREAD, Part
from engine.records.group_dir import Group

GAINS = (("m1_r1", "lazy"), ("m1_r1", "lazyd"), ("r0.01", "lazyd"))  # (cell, recipe) read against the plain arm


def table(ps: dict[tuple[str, str, str], Pairs], gap: dict[tuple[str, str], list[float]]) -> str:
    """Tasks, cells and recipes against the plain arm of the same cell and seed: mean (range, n) over seeds."""
    lines = [
        "| task | cell | recipe | targets' val acc, plain | targets − common, plain | change | higher | "
        "common change | 95% val, plain → recipe |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (op, cell, recipe), p in ps.items():
        d = p.changes("val_acc_target")
        higher = f"{sum(x > 0 for x in d)}/{len(d)}"
        lines.append(
            f"| {op} | {cell} | {recipe} | {spread(p.side('val_acc_target', 0))} | "
            f"{spread(gap.get((op, cell), []), sign=True)} | {spread(d, sign=True)} | {higher} | "
            f"{spread(p.changes('val_acc_common'), sign=True)} | {reach(p, '/')} |"
        )
    return "\n".join(lines)


def recipe_tasks_pairs(group: Group) -> Reading:
    """Issue 53, question (e), the one-pair cells. The claim, fixed before the data: on each of add, sub and div,
    a target with one pair at r = 1 ends more than 0.01 below the common tokens of its run in every seed; lazy
    rows and decay only when drawn raise it in every seed, and decay only when drawn raises the targets at
    r = 0.01 too; decay only when drawn costs the common tokens nothing (a guard). The plain and lazy-rows arms
    at r = 0.01 are recipe_tasks', kept beside this group."""
    obs, bad = observe(group, beside(group, "recipe_tasks"))
    want = n_seeds(group)
    ps: dict[tuple[str, str, str], Pairs] = {}
    gap: dict[tuple[str, str], list[float]] = {}
    parts: list[Part] = []
    for op in TASKS:
        pairs = pair_up(obs, op)
        gap[(op, "m1_r1")], gap[(op, "r0.01")] = gaps(obs, op, "m1_r1"), gaps(obs, op)
        parts.append(deficit_part(op, gap[(op, "m1_r1")], want, "m1_r1"))
        for cell, recipe in GAINS:
            p = pairs.get((cell, recipe))
            parts.append(gain_part(op, p, want, cell, recipe))
            if p is not None:
                ps[(op, cell, recipe)] = p
    costs = [p for (_, _, r), p in ps.items() if r == "lazyd"]
    text = f"decay only when drawn costs the common tokens less than {TOL:g} on the three tasks"
    if sum(len(p.pairs) for p in costs) < want * len(TASKS) * 2:
        parts.append(Part(text, UNREAD, "unread: not every seed of every task and cell has ended", role=GUARD))
    else:
        common = [x for p in costs for x in p.changes("val_acc_common")]
        o = _costs_nothing(common)
        parts.append(part(text, o, f"{o.k_of_n('pairs')}; change, pooled: {_pooled(common)}", role=GUARD))
    v: dict[str, str] = {"table": "\n" + table(ps, gap) + "\n", "mismatched": str(bad)}
    for (op, cell, recipe), p in ps.items():
        d = p.changes("val_acc_target")
        key = f"{op}_{cell.replace('.', '')}_{recipe}"
        v[key], v[f"{key}_k"] = spread(d, sign=True), f"{sum(x > 0 for x in d)} of {len(d)}"
    for (op, cell), g in gap.items():
        key = f"{op}_{cell.replace('.', '')}_gap"
        v[key], v[f"{key}_k"] = spread(g, sign=True), f"{sum(x < -TOL for x in g)} of {len(g)}"

    def one_pair(recipe: str) -> list[float]:  # the recipe's changes over the three tasks
        return [x for (_, c, r), p in ps.items() if (c, r) == ("m1_r1", recipe) for x in p.changes("val_acc_target")]

    lazyd, gains = one_pair("lazyd"), one_pair("lazy")
    v["m1_r1_lazyd_k"] = f"{sum(x > 0 for x in lazyd)} of {len(lazyd)}"  # over the tasks: a count, no interval
    deficits = [x for (_, cell), g in gap.items() if cell == "m1_r1" for x in g]
    v["m1_r1_gap_k"] = f"{sum(x < -TOL for x in deficits)} of {len(deficits)}"
    head = f"lazy rows − plain, one pair at r = 1 on add, sub, div: {_pooled(gains)}"
    k = f"{sum(x > 0 for x in gains)} of {len(gains)} pairs higher"
    return Reading(parts, head, k, f"{want} × {len(TASKS)} ({', '.join(TASKS)})", v)


CLAIM = Claim(
    "recipe_tasks_pairs",
    "",
    "The one-pair deficit on add, sub and div (ours, §4.2): lazy rows and decay only when drawn",
    "recipe_tasks_pairs",
    "partly",
    "one-pair deficit in {m1_r1_gap_k} seeds (add, sub, div); decay only when drawn lifts {m1_r1_lazyd_k} pairs, "
    "lazy rows {add_m1_r1_lazy_k}, {sub_m1_r1_lazy_k}, {div_m1_r1_lazy_k}",
    read=recipe_tasks_pairs,  # the parts, fixed before the data
    ours=True,
    tail=5,
    metrics="val_acc_target,val_acc,val_acc_common,target_norm",
    tables=("decoupling targets",),
    row=226,
)
