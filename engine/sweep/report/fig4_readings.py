"""Fig. 4's readings (§4.2, eqs. 3-6): the paper's sampling strategies and our token-starved split.

Reads three kept groups: `fig4_sampling` (claim 2: random, uniform and the paper's skewed split, batch 64,
128 and 512, add and mul), `fig4_token_skew` (ours: random against token-level skews s = 3, 8, 15, add
and mul) and `fig4_epochs` (ours: random against s = 15 at batch 512, 128 and 64 for equal epochs, mul).
Every contrast pairs two members of the same seed and task whose configs differ in the named factor
alone (a part fails where they differ in more). A final value is the mean of a member's last TAIL
evaluations; "ends below" is read at each member's own budget.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from engine.rundir.dirs import read_metrics
from engine.sweep.report.readings import (
    Reading,
    Row,
    budget_of,
    generalized,
    geo_ratio,
    paired_alone,
    part,
    rows,
    sooner,
    spread,
)
from engine.sweep.report.tables import member_finals
from engine.sweep.report.verdicts import FAILS, Outcome, Part
from engine.sweep.spec import Group
from engine.train.phases import MEMORIZED_ACC

TAIL = 3  # evaluations a final value averages: train.patience, so a member the stop rule ended averages its streak
LARGE = 512  # Fig. 4: "the performance gap diminishes for batch sizes exceeding 512"
FLAT = 0.05  # a plateau (ours): val accuracy rises by less than this over the last quarter of the budget
SPLIT = ("data.split", "data.skew", "data.skew_on", "data.skew_order")  # the fields that make a split

Pair = tuple[Row, Row]
Finals = dict[str, dict[str, float]]


def _alone(other: int, factor: str) -> list[Part]:
    """A failing part when some pairs differ in more than the factor; none when every pair is clean."""
    return [Part(f"the pairs differ in {factor} alone", FAILS, f"{other} pairs differ in more")] if other else []


def _sooner(pairs: Sequence[Pair]) -> tuple[Outcome, list[tuple[float, float]]]:
    """Does each pair's first member reach 95% val in fewer steps (readings.sooner, pair by pair)?"""
    agree: list[bool | None] = []
    opp: list[bool] = []
    both: list[tuple[float, float]] = []
    for a, b in pairs:
        o, bb, _ = sooner([a], [b])
        agree += list(o.agree)
        opp += list(o.opposite)
        both += bb
    return Outcome(agree, opp), both


def _stopped(r: Row) -> bool:
    """Whether the stop rule ended the member before its budget (val accuracy held at its target)."""
    return r.raw.steps is not None and r.raw.steps < r.budget


def _val(fin: Finals, r: Row, col: str = "val_acc") -> float | None:
    v = fin.get(r.member.id, {}).get(col)
    return v if v is not None and math.isfinite(v) else None


def _below(pairs: Sequence[Pair], fin: Finals) -> tuple[Outcome, list[float]]:
    """Does each pair's first member (a skewed split) end below its second (random)? It agrees when its final
    val is lower and it ran its whole budget (a member the stop rule ended held val at the stop target, no
    lower plateau); opposite when its final val is higher. Also the differences first − second."""
    agree: list[bool | None] = []
    opp: list[bool] = []
    d: list[float] = []
    for s, r in pairs:
        x, y = _val(fin, s), _val(fin, r)
        if x is None or y is None:
            continue
        agree.append(x < y and not _stopped(s))
        opp.append(x > y)
        d.append(x - y)
    return Outcome(agree, opp), d


def _fits(rs: Sequence[Row]) -> Outcome:
    """Each member memorized: train accuracy reached MEMORIZED_ACC (results.csv memorized_step)."""
    return Outcome([r.raw.memorized_step is not None for r in rs], [r.raw.memorized_step is None for r in rs])


def _rise(group: Group, r: Row) -> float | None:
    """val accuracy at the last evaluation less its value at the first evaluation in the last quarter of the
    budget; None for a member the stop rule ended or with fewer than two evaluations there."""
    if _stopped(r):
        return None
    late = [m["val_acc"] for m in read_metrics(group.member_dir(r.member)) if m["step"] >= 0.75 * r.budget]
    late = [v for v in late if math.isfinite(v)]
    return late[-1] - late[0] if len(late) > 1 else None


def _batch(group: Group, r: Row) -> int:
    return group.config(r.member).train.batch_size


def _split(group: Group, r: Row) -> str:
    return group.config(r.member).data.split


def _ops(rs: Sequence[Row]) -> list[str]:
    return list(dict.fromkeys(str(r.member.values.get("data.op", "")) for r in rs))


def _in(group: Group, rs: Sequence[Row], split: str, batch: int | None = None, op: str | None = None) -> list[Row]:
    return [
        r
        for r in rs
        if _split(group, r) == split
        and (batch is None or _batch(group, r) == batch)
        and (op is None or str(r.member.values.get("data.op", "")) == op)
    ]


def _and(items: Sequence[object]) -> str:
    xs = [str(x) for x in items]
    if not xs:
        return "-"
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def _lead(u: Row, r: Row) -> tuple[float, float]:
    """Uniform's lead over random in steps to 95% val (random − uniform) as an interval: exact where both
    reached, bounded by the budget where one did, unbounded where neither did."""
    if u.gen is not None and r.gen is not None:
        return r.gen - u.gen, r.gen - u.gen
    if u.gen is not None:  # random beyond its budget
        return r.budget - u.gen, math.inf
    if r.gen is not None:  # uniform beyond its budget
        return -math.inf, r.gen - u.budget
    return -math.inf, math.inf


def fig4_sampling(group: Group) -> Reading:
    """Fig. 4 (§4.2): at lr 0.001, uniform sampling generalizes faster than random, the gap diminishes for
    batch sizes of 512 and more, and the skewed split fits the training set but generalizes to a lower
    plateau (eqs. 3-6: rare tokens get sparse embedding updates). Paired by seed and task within a batch;
    a part that needs a member to reach 95% val that did not by the budget is unread."""
    rs = rows(group)
    fin = member_finals(group, None, TAIL)
    batches = sorted({_batch(group, r) for r in rs})
    small, large = [b for b in batches if b < LARGE], [b for b in batches if b >= LARGE]
    ops = _ops(rs)

    def pairs(split: str, bs: int) -> tuple[list[Pair], int]:
        out, other = [], 0
        for op in ops:
            p, o = paired_alone(group, _in(group, rs, split, bs, op), _in(group, rs, "random", bs, op), ("data.split",))
            out += p
            other += o
        return out, other

    mixed = 0
    up: dict[int, list[Pair]] = {}
    sk: dict[int, list[Pair]] = {}
    for bs in batches:
        up[bs], o1 = pairs("uniform", bs)
        sk[bs], o2 = pairs("skewed", bs)
        mixed += o1 + o2
    faster, _ = _sooner([p for bs in small for p in up[bs]])
    # the lead at a large batch smaller than at a small one, per task and seed: intervals that do not overlap
    agree: list[bool | None] = []
    opp: list[bool] = []
    for big in large:
        at_big = {(str(u.member.values.get("data.op")), u.member.seed): _lead(u, r) for u, r in up[big]}
        for bs in small:
            for u, r in up[bs]:
                lo_b, hi_b = _lead(u, r)
                lo_l, hi_l = at_big.get((str(u.member.values.get("data.op")), u.member.seed), (-math.inf, math.inf))
                agree.append(True if hi_l < lo_b else False if lo_l >= hi_b else None)
                opp.append(lo_l > hi_b)
    shrinks = Outcome(agree, opp)
    big_o, big_both = _sooner([p for bs in large for p in up[bs]])
    skewed = _in(group, rs, "skewed")
    fits = _fits(skewed)
    b = budget_of(rs)
    sm, lg = _and(small), _and(large)
    parts = [
        part(
            f"uniform sooner than random below batch {LARGE}",
            faster,
            f"at batch {sm}, uniform reaches 95% val sooner in {faster.k_of_n('pairs')}",
        ),
        part(
            f"the gap shrinks at batch {LARGE} and above",
            shrinks,
            f"uniform's lead smaller at batch {lg} than at {sm} in {shrinks.k_of_n('pairs')}; at {lg} uniform "
            f"sooner in {big_o.k_of_n('pairs')}, uniform/random steps {geo_ratio(big_both)}",
        ),
        part(
            "the skewed split fits the training set",
            fits,
            f"train accuracy reaches {MEMORIZED_ACC:.0%} in {fits.k_of_n('skewed members')}",
        ),
    ]
    values: dict[str, str] = {"budget": b, "small": sm, "large": lg, "chance": f"{1 / group.base.data.p:.3f}"}
    below_all: list[bool | None] = []
    for bs in batches:
        o, d = _below(sk[bs], fin)
        below_all += list(o.agree)
        above = sum(o.opposite)
        parts.append(
            part(
                f"the skewed split ends below random at batch {bs}",
                o,
                f"below random in {o.k_of_n('pairs')}, above in {above}; final val skewed − random "
                f"{spread(d, sign=True)}",
            )
        )
        values[f"skew_minus_random_{bs}"] = spread(d, sign=True)
        values[f"skew_above_{bs}"] = f"{above} of {len(o.agree)} pairs"
        values[f"skew_gen_{bs}"] = generalized([s for s, _ in sk[bs]])
        values[f"random_gen_{bs}"] = generalized([r for _, r in sk[bs]])
    parts += _alone(mixed, "data.split")
    sk_big, sk_both = _sooner([p for bs in large for p in sk[bs]])
    near = [r for bs in small for p in up[bs] for r in p]
    values |= {
        "small_gen": generalized(near),
        "small_val_random": spread([v for bs in small for _, r in up[bs] if (v := _val(fin, r)) is not None]),
        "small_val_uniform": spread([v for bs in small for u, _ in up[bs] if (v := _val(fin, u)) is not None]),
        "uniform_sooner_large": big_o.k_of_n("pairs"),
        "uniform_ratio_large": geo_ratio(big_both),
        "skew_sooner_large": sk_big.k_of_n("pairs"),
        "skew_ratio_large": geo_ratio(sk_both),
    }
    head = "final val, skewed − random: " + "; ".join(
        f"batch {bs} {values[f'skew_minus_random_{bs}']}" for bs in batches
    )
    return Reading(
        parts,
        head,
        Outcome(below_all).k_of_n("pairs skewed below random"),
        f"{len(group.spec.seeds)} × {len(ops)} ({', '.join(ops)}) × {len(batches)} batch sizes",
        values,
    )


def token_skew(group: Group) -> Reading:
    """Ours, on §4.2's mechanism (eqs. 3-6, Fig. 4's lower plateau): a training pair drawn with weight
    exp(−s·(r(a)+r(b))/(p−1)) starves a few tokens in both operand positions. Does the most skewed split fit
    the training set and then plateau below the random split, with the rare tokens' pairs lowest? Paired
    by task and seed against random; the plateau's flatness is judged (FLAT is ours)."""
    rs = rows(group)
    fin = member_finals(group, None, TAIL)
    arms = list(group.spec.arms)
    split = {a: group.config(next(r for r in rs if r.member.arm == a).member).data for a in arms}
    base = next(a for a in arms if split[a].split == "random")
    skews = sorted((a for a in arms if split[a].split == "skewed"), key=lambda a: split[a].skew)
    top = skews[-1]
    s = f"s = {split[top].skew:g}"
    ops = _ops(rs)

    def pairs(arm: str) -> tuple[list[Pair], int]:
        out, other = [], 0
        for op in ops:
            a = [r for r in rs if r.member.arm == arm and r.member.values.get("data.op") == op]
            b = [r for r in rs if r.member.arm == base and r.member.values.get("data.op") == op]
            p, o = paired_alone(group, a, b, SPLIT)
            out += p
            other += o
        return out, other

    starved = [r for r in rs if r.member.arm == top]
    mine, other = pairs(top)
    fits = _fits(starved)
    below, d = _below(mine, fin)
    rise = [x for r in starved if (x := _rise(group, r)) is not None]
    flat = Outcome([x < FLAT for x in rise], [False] * len(rise))
    rare = [
        (x, y)
        for r in starved
        if (x := _val(fin, r, "val_acc_rare")) is not None and (y := _val(fin, r, "val_acc_common")) is not None
    ]
    lowest = Outcome([x < y for x, y in rare], [x > y for x, y in rare])
    parts = [
        part(
            f"the split fits the training set ({s})",
            fits,
            f"train accuracy reaches {MEMORIZED_ACC:.0%} in {fits.k_of_n('members')}",
        ),
        part(
            f"it ends below the random split ({s})",
            below,
            f"below random in {below.k_of_n('pairs')}; final val {s} − random {spread(d, sign=True)}",
        ),
        part(
            f"a plateau: flat over the last quarter of the budget ({s})",
            flat,
            f"val accuracy rises by less than {FLAT:g} in {flat.k_of_n('members')}",
            judged=f"a slow rise and a plateau differ only in degree; the threshold {FLAT:g} is ours",
        ),
        part(
            f"the rare tokens' pairs below the common tokens' ({s})",
            lowest,
            f"val_acc_rare below val_acc_common in {lowest.k_of_n('members')}",
        ),
        *_alone(other, "the split"),
    ]
    absent = [v for r in starved if (v := _val(fin, r, "val_acc_absent")) is not None]
    values = {
        "s": f"{split[top].skew:g}",
        "budget": budget_of(rs),
        "starved_gen": generalized(starved),
        "random_gen": generalized([r for r in rs if r.member.arm == base]),
        "val_starved": spread([v for r in starved if (v := _val(fin, r)) is not None]),
        "val_random": spread([v for _, r in mine if (v := _val(fin, r)) is not None]),
        "val_gap": spread(d, sign=True),
        "below_k": below.k_of_n("pairs"),
        "rare": spread([x for x, _ in rare]),
        "rare_k": lowest.k_of_n("members"),
        "common": spread([y for _, y in rare]),
        "rare_random": spread([v for _, r in mine if (v := _val(fin, r, "val_acc_rare")) is not None]),
        "absent_members": f"{len(absent)} of {len(starved)}",
        "absent": spread(absent),
        "rise_max": f"{max(rise):.3f}" if rise else "-",
    }
    for arm in skews[:-1]:
        p, _ = pairs(arm)
        o, _ = _sooner(p)
        bo, bd = _below(p, fin)
        values[f"{arm}_sooner"] = o.k_of_n("pairs")
        values[f"{arm}_below"] = bo.k_of_n("pairs")
        values[f"{arm}_gap"] = spread(bd, sign=True)
        values[f"{arm}_gen"] = generalized([r for r in rs if r.member.arm == arm])
    head = f"final val, {s} − random: {values['val_gap']}; {s} rare tokens' pairs {values['rare']}"
    return Reading(
        parts,
        head,
        f"{below.k_of_n('pairs below random')}; {values['starved_gen']} {s} members reach 95% val",
        f"{len(group.spec.seeds)} × {len(ops)} ({', '.join(ops)})",
        values,
    )


def fig4_epochs(group: Group) -> Reading:
    """Ours, on Fig. 4's batch rows (§4.2): at lr 0.001 a budget in steps gives a small batch few epochs. At
    equal epochs, does the token-starved split (s = 15) still end below random at every batch, while random
    generalizes at every batch? Paired by seed within a batch; the skewed member read at its whole budget."""
    rs = rows(group)
    fin = member_finals(group, None, TAIL)
    batches = sorted({_batch(group, r) for r in rs}, reverse=True)
    random = _in(group, rs, "random")
    control = Outcome([r.gen is not None for r in random], [r.gen is None for r in random])
    each = {bs: _in(group, rs, "random", bs) for bs in batches}
    reach = "; ".join(f"batch {bs}: {generalized(each[bs])} by step {budget_of(each[bs])}" for bs in batches)
    parts = [part("the random split reaches 95% val at every batch", control, reach)]
    values: dict[str, str] = {"random_gen": generalized(random)}
    below_all: list[bool | None] = []
    other = 0
    for bs in batches:
        p, o = paired_alone(group, _in(group, rs, "skewed", bs), _in(group, rs, "random", bs), ("data.split",))
        other += o
        below, d = _below(p, fin)
        below_all += list(below.agree)
        parts.append(
            part(
                f"the starved split ends below random at batch {bs}",
                below,
                f"below in {below.k_of_n('pairs')}; final val skewed − random {spread(d, sign=True)}",
            )
        )
        values[f"gap_{bs}"] = spread(d, sign=True)
        starved = _in(group, rs, "skewed", bs)
        values[f"val_{bs}"] = spread([v for r in starved if (v := _val(fin, r)) is not None])
        values[f"rare_{bs}"] = spread([v for r in starved if (v := _val(fin, r, "val_acc_rare")) is not None])
        values[f"budget_{bs}"] = budget_of(starved)
        epochs = [read_metrics(group.member_dir(r.member))[-1].get("epoch", math.nan) for r in starved]
        values[f"epochs_{bs}"] = f"{max(epochs):,.0f}" if epochs and all(map(math.isfinite, epochs)) else "-"
    parts += _alone(other, "data.split")
    starved = _in(group, rs, "skewed")
    lo, hi = batches[-1], batches[0]
    small_big = [
        (x - y)
        for a, b in paired_alone(
            group, _in(group, rs, "skewed", lo), _in(group, rs, "skewed", hi), ("train.batch_size", "train.max_steps")
        )[0]
        if (x := _val(fin, a)) is not None and (y := _val(fin, b)) is not None
    ]
    rise = [x for r in starved if (x := _rise(group, r)) is not None]
    values |= {
        "starved_gen": generalized(starved),
        "small_minus_large": spread(small_big, sign=True),
        "small_higher": Outcome([x > 0 for x in small_big]).k_of_n("seeds"),
        "lo": str(lo),
        "hi": str(hi),
        "rise_max": f"{max(rise):.3f}" if rise else "-",
        "below_k": Outcome(below_all).k_of_n("pairs"),
    }
    head = "final val at equal epochs, starved − random: " + "; ".join(
        f"batch {bs} {values[f'gap_{bs}']}" for bs in batches
    )
    return Reading(
        parts,
        head,
        Outcome(below_all).k_of_n("pairs starved below random"),
        f"{len(group.spec.seeds)} × 1 ({group.base.data.op}) × {len(batches)} batch sizes",
        values,
    )
