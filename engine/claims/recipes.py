"""The recipes studies' readings (issue 53; ours, §4.2): each recipe against its cell's plain arm, seed by seed.

The recipe presets (presets/recipe_adam.toml, recipe_adamw.toml) train the starved cells of cure_decouple
(r = 0.01: data intact, draws cut; one pair at r = 1 and at matched draws; r = 1, the control) with each
recipe from step 0. An arm is OPT_CELL (plain) or OPT_CELL_RECIPE. A recipe is read against its cell's plain
arm of the same seed, only where the two configs differ in the recipe's keys alone (`readings.same_but`):
the plain arm and lazy rows under Adam come from cure_decouple's kept group (docs/data/cure_decouple), whose
members a recipe shares its seed's split and targets with. Each outcome is the mean of a member's last 5
evaluations, as the cure table reads it (engine/sweep/report/cures.py). Values pooled over cells are a mean
with its range, never an interval: the unit is the seed, and the cells share the seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.claims.cause_pairs import TOL, _costs_nothing, _pooled
from engine.claims.readings import Reading, direction, n_seeds, part, same_but, spread
from engine.claims.verdicts import GUARD, UNREAD, Outcome, Part
from engine.records.group_dir import Group

CELLS = {  # cure_decouple's cells, in a part's words
    "r0.01": "at r = 0.01",
    "m1_r1": "with one pair at r = 1",
    "m1_matched": "with one pair at matched draws",
    "r1": "in the control (r = 1)",
}
CONTROL = "r1"
RECIPES = {  # the suffix of a recipe's arm -> (the config keys it sets, its name in a sentence)
    "lazy": (("optim.lazy_rows",), "lazy rows"),
    "lazyd": (("optim.lazy_decay",), "decay only when drawn"),
    "e0": (("optim.decay_sets",), "E out of decay"),
    "equal": (("optim.equal_rows",), "equal rows"),
    "nowd": (("optim.decay_sets",), "no decay on the targets (oracle)"),  # cure_decouple's, kept beside
}
OUTCOMES = ("val_acc_target", "target_norm", "val_acc_common", "val_acc")
HALF = 0.5  # "keeps lazy rows' gain": a pair's gain at least this share of lazy rows' gain in the same seed
NOT_RUN = "unread: no pair of these arms has ended in the kept group"


def _short(n: int, want: int) -> str:
    """A part is read on every seed of the preset or not at all: a verdict on the seeds that ended first
    would read a stop rule (the order the sweep ran in), not the data."""
    return f"unread: {n} of {want} seeds ended in the kept group"


@dataclass(frozen=True)
class Obs:
    """One member's outcomes: the mean of its last evaluations, and whether it reached 95% val."""

    arm: str
    seed: int
    values: dict[str, float]
    reached: bool


@dataclass(frozen=True)
class Pairs:
    """A recipe in a cell against the plain arm of the same cell, by seed: (plain, recipe) per seed."""

    opt: str
    cell: str
    recipe: str
    pairs: list[tuple[Obs, Obs]] = field(default_factory=list)

    def changes(self, metric: str) -> list[float]:
        out = []
        for a, b in self.pairs:
            x, y = a.values.get(metric, math.nan), b.values.get(metric, math.nan)
            if math.isfinite(x) and math.isfinite(y):
                out.append(y - x)
        return out

    def side(self, metric: str, which: int) -> list[float]:
        vals = [(a, b)[which].values.get(metric, math.nan) for a, b in self.pairs]
        return [v for v in vals if math.isfinite(v)]


def arm_name(opt: str, cell: str, recipe: str = "") -> str:
    return f"{opt}_{cell}" + (f"_{recipe}" if recipe else "")


def pair_up(obs: Sequence[Obs], opt: str) -> dict[tuple[str, str], Pairs]:
    """(cell, recipe) -> the recipe's pairs against its cell's plain arm, for every recipe arm observed."""
    by = {(o.arm, o.seed): o for o in obs}
    out = {}
    for cell in CELLS:
        plain = {s: o for (a, s), o in by.items() if a == arm_name(opt, cell)}
        for recipe in RECIPES:
            arm = arm_name(opt, cell, recipe)
            ps = [(plain[s], o) for (a, s), o in sorted(by.items()) if a == arm and s in plain]
            if ps:
                out[(cell, recipe)] = Pairs(opt, cell, recipe, ps)
    return out


def deficits(obs: Sequence[Obs], opt: str) -> dict[str, list[float]]:
    """Each starved cell's plain targets minus the control's, by seed: the draw deficit itself."""
    control = {o.seed: o for o in obs if o.arm == arm_name(opt, CONTROL)}
    out = {}
    for cell in CELLS:
        if cell == CONTROL:
            continue
        d = []
        for o in obs:
            if o.arm == arm_name(opt, cell) and o.seed in control:
                x, y = control[o.seed].values.get("val_acc_target", math.nan), o.values.get("val_acc_target", math.nan)
                if math.isfinite(x) and math.isfinite(y):
                    d.append(y - x)
        if d:
            out[cell] = d
    return out


def _keeps_gain(recipe: Pairs, lazy: Pairs) -> Outcome:
    """Per seed: the recipe's gain is at least HALF of lazy rows' gain in the same seed (lazy rows gaining)."""
    g_lazy = {a.seed: d for (a, _), d in zip(lazy.pairs, lazy.changes("val_acc_target"), strict=False)}
    agree, opp = [], []
    for (a, _), d in zip(recipe.pairs, recipe.changes("val_acc_target"), strict=False):
        if a.seed in g_lazy:
            agree.append(d >= HALF * g_lazy[a.seed])
            opp.append(d <= 0)
    return Outcome(agree, opp)


def cost_parts(ps: dict[tuple[str, str], Pairs], recipe: str, want: int, starved: Sequence[str]) -> list[Part]:
    """A recipe costs the common tokens nothing in the study's starved cells, and the control nothing: guards
    (verdicts.GUARD), which can lower a verdict and never lift it."""
    name = RECIPES[recipe][1]
    t1 = f"{name} costs the common tokens less than {TOL:g} in the starved cells"
    t2 = f"{name} costs the control (r = 1) less than {TOL:g} of val accuracy"
    common = [x for c in starved if (c, recipe) in ps for x in ps[(c, recipe)].changes("val_acc_common")]
    short = [c for c in starved if len(ps[(c, recipe)].pairs if (c, recipe) in ps else []) < want]
    out = []
    if short:  # a cost is read over every starved cell, every seed, or not at all
        out.append(Part(t1, UNREAD, f"{NOT_RUN} on every seed ({', '.join(short)})", role=GUARD))
    else:
        o1 = _costs_nothing(common)
        out.append(part(t1, o1, f"{o1.k_of_n('pairs')}; change, pooled: {_pooled(common)}", role=GUARD))
    if (CONTROL, recipe) not in ps:
        out.append(Part(t2, UNREAD, NOT_RUN, role=GUARD))
    elif len(ps[(CONTROL, recipe)].pairs) < want:
        out.append(Part(t2, UNREAD, _short(len(ps[(CONTROL, recipe)].pairs), want), role=GUARD))
    else:
        control = ps[(CONTROL, recipe)].changes("val_acc")
        o2 = _costs_nothing(control)
        out.append(part(t2, o2, f"{o2.k_of_n('pairs')}; change: {spread(control, sign=True)}", role=GUARD))
    return out


def gain_part(ps: dict[tuple[str, str], Pairs], cell: str, recipe: str, want: int) -> Part:
    text = f"{CELLS[cell]}, {RECIPES[recipe][1]} raises the targets' accuracy"
    p = ps.get((cell, recipe))
    if p is None:
        return Part(text, UNREAD, NOT_RUN)
    if len(p.pairs) < want:
        return Part(text, UNREAD, _short(len(p.pairs), want))
    d = p.changes("val_acc_target")
    o = direction(d, True)
    return part(text, o, f"{o.k_of_n('pairs higher')}; change: {spread(d, sign=True)}")


def deficit_part(d: dict[str, list[float]], cell: str, want: int) -> Part:
    text = f"{CELLS[cell]}, the plain arm's targets end more than {TOL:g} below the control's"
    if cell not in d:
        return Part(text, UNREAD, NOT_RUN)
    if len(d[cell]) < want:
        return Part(text, UNREAD, _short(len(d[cell]), want))
    o = Outcome([x < -TOL for x in d[cell]], [x > 0 for x in d[cell]])  # a deficit of more than rounding
    return part(
        text, o, f"{o.k_of_n(f'seeds lower by {TOL:g} or more')}; starved − control: {spread(d[cell], sign=True)}"
    )


def keeps_part(ps: dict[tuple[str, str], Pairs], cell: str, recipe_name: str, want: int) -> Part:
    text = f"{CELLS[cell]}, {RECIPES[recipe_name][1]} keeps at least half of lazy rows' gain"
    recipe, lazy = ps.get((cell, recipe_name)), ps.get((cell, "lazy"))
    if recipe is None or lazy is None:
        return Part(text, UNREAD, NOT_RUN)
    if min(len(recipe.pairs), len(lazy.pairs)) < want:
        return Part(text, UNREAD, _short(min(len(recipe.pairs), len(lazy.pairs)), want))
    o = _keeps_gain(recipe, lazy)
    gl, gr = lazy.changes("val_acc_target"), recipe.changes("val_acc_target")
    return part(
        text, o, f"{o.k_of_n('seeds')}; gain {spread(gr, sign=True)} against lazy rows' {spread(gl, sign=True)}"
    )


def values(ps: dict[tuple[str, str], Pairs], obs: Sequence[Obs], opt: str) -> dict[str, str]:
    """Named numbers for the page's sentences: per cell and recipe, each outcome's change and k of n, and the
    plain arms' deficits. Keys: CELL_RECIPE_{target,norm,common,val} (no dots), with _k for k of n higher."""
    out: dict[str, str] = {}
    for (cell, recipe), p in ps.items():
        key = f"{cell}_{recipe}".replace(".", "")
        for metric, short in zip(OUTCOMES, ("target", "norm", "common", "val"), strict=True):
            d = p.changes(metric)
            out[f"{key}_{short}"] = spread(d, sign=True)
            out[f"{key}_{short}_k"] = f"{sum(x > 0 for x in d)} of {len(d)}"
        out[f"{key}_reach"] = reach(p, " of ")
    for cell, d in deficits(obs, opt).items():
        key = cell.replace(".", "")
        out[f"{key}_deficit"] = spread(d, sign=True)
        out[f"{key}_deficit_k"] = f"{sum(x < -TOL for x in d)} of {len(d)}"  # lower by more than TOL
    for cell in CELLS:
        plain = [
            o.values["val_acc_target"] for o in obs if o.arm == arm_name(opt, cell) and "val_acc_target" in o.values
        ]
        if plain:
            out[f"{cell.replace('.', '')}_plain"] = spread(plain)
    return out


def page_values(ps: dict[tuple[str, str], Pairs], obs: Sequence[Obs], opt: str, mismatched: int) -> dict[str, str]:
    """`values`, with the page's table (a Markdown table starts on a line of its own) and the count of pairs
    dropped by `observe`'s config check: what every recipe study's page quotes."""
    return values(ps, obs, opt) | {"table": "\n" + table(ps) + "\n", "mismatched": str(mismatched)}


def reach(p: Pairs, sep: str) -> str:
    """Seeds reaching 95% val, plain → recipe: "2 → 5 of 5" (sep " of ") or "2/5 → 5/5" (sep "/")."""
    n = len(p.pairs)
    a, b = sum(x.reached for x, _ in p.pairs), sum(y.reached for _, y in p.pairs)
    return f"{a} → {b} of {n}" if sep == " of " else f"{a}/{n} → {b}/{n}"


def table(ps: dict[tuple[str, str], Pairs]) -> str:
    """Recipes against cells, a Markdown table: each outcome's plain value and the recipe's change, by seed."""
    head = (
        "| cell | recipe | targets' val acc, plain | change | higher | row norm change | common change | "
        "val acc change | 95% val, plain → recipe |"
    )
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for cell in CELLS:
        for recipe in RECIPES:
            p = ps.get((cell, recipe))
            if p is None:
                continue
            d = p.changes("val_acc_target")
            lines.append(
                f"| {cell} | {RECIPES[recipe][1]} | {spread(p.side('val_acc_target', 0))} | {spread(d, sign=True)} | "
                f"{sum(x > 0 for x in d)}/{len(d)} | {spread(p.changes('target_norm'), sign=True)} | "
                f"{spread(p.changes('val_acc_common'), sign=True)} | {spread(p.changes('val_acc'), sign=True)} | "
                f"{reach(p, '/')} |"
            )
    return "\n".join(lines)


def observe(
    group: Group, base: Group | Sequence[Group | None] | None = None, borrow: Sequence[str] = ("", "lazy")
) -> tuple[list[Obs], int]:
    """The group's members as Obs, with the arms of the `borrow` recipes ("" the plain arm) of `base` where given
    (groups kept beside: cure_decouple for the Adam recipes; recipe_adamw and recipe_adamw_pairs for AdamW's,
    the first that has an arm and seed giving it); and how many recipe members differ from their cell's plain
    arm of the same seed in more than the recipe's keys (such a pair is dropped: it is not the recipe's
    contrast)."""
    from engine.sweep.report.cures import cure_metrics
    from engine.sweep.report.tables import member_finals

    def members(g: Group, keep: Callable[[str], bool]) -> dict[tuple[str, int], tuple[Obs, Any, Group]]:
        finals = member_finals(g, cure_metrics(g), 5)
        res = g.results()
        out = {}
        for m in g.members:
            if m.id in finals and keep(m.arm):
                out[(m.arm, m.seed)] = (Obs(m.arm, m.seed, finals[m.id], res[m.id].generalized_step is not None), m, g)
        return out

    found = members(group, lambda arm: True)
    opts = {arm.split("_", 1)[0] for arm, _ in found}
    wanted = {arm_name(o, c, r) for o in opts for c in CELLS for r in borrow}
    bases = [base] if isinstance(base, Group) else list(base or [])
    for b in bases:
        if b is not None:
            for k, v in members(b, lambda arm: arm in wanted).items():
                found.setdefault(k, v)
    bad = 0
    for (arm, seed), (_, m, g) in list(found.items()):
        opt, _, rest = arm.partition("_")
        recipe = next((r for r in RECIPES if rest.endswith("_" + r)), "")
        if not recipe:
            continue
        cell = rest.removesuffix("_" + recipe)
        plain = found.get((arm_name(opt, cell), seed))
        if plain is None:
            continue
        if not same_but(g.config(m), plain[2].config(plain[1]), RECIPES[recipe][0]):
            bad += 1
            del found[(arm, seed)]
    return [o for o, _, _ in found.values()], bad


def deficit_and_cure(group: Group, opt: str, starved: Sequence[str], plain: str, base: Group | None = None) -> Reading:
    """The reading recipe_adamw, recipe_adamw_pairs and recipe_transformer share, fixed before their data: in
    each starved cell the plain arm's targets end more than TOL below the control's, seed by seed (the deficit),
    lazy rows raise them in every seed, and they cost neither the common tokens nor the control. `base` is a
    kept group whose arms (the control) join the group's; `plain` names the plain arm in the headline."""
    obs, bad = observe(group, base)
    ps = pair_up(obs, opt)
    d = deficits(obs, opt)
    want = n_seeds(group)
    parts = [deficit_part(d, c, want) for c in starved]
    parts += [gain_part(ps, c, "lazy", want) for c in starved]
    parts += cost_parts(ps, "lazy", want, starved)
    v = page_values(ps, obs, opt, bad)
    key = starved[0].replace(".", "")
    head = f"plain {plain}, {CELLS[starved[0]].partition(' ')[2]} − control, targets: {v.get(f'{key}_deficit', '-')}"
    k = f"{v.get(f'{key}_deficit_k', '0 of 0')} seeds lower by more than {TOL:g}"
    return Reading(parts, head, k, f"{want} × 1 ({group.base.data.op})", v)
