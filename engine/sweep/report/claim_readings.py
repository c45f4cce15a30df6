"""Each rerun claim's reading: its parts (checked per seed), headline number and k of n, from its kept group.

One function per preset; docs/claims/*.md say in words what each part tests and why a judged part is
judged. The paper's sections and figures are cited per function.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from engine.rundir.dirs import read_metrics
from engine.sweep.report.cause_readings import cure_decouple, cure_skew_mul, decouple_direction, decouple_factorial
from engine.sweep.report.decouple_readings import decouple
from engine.sweep.report.fig4_readings import fig4_epochs, fig4_sampling, token_skew
from engine.sweep.report.fix_readings import adaptive, fixes
from engine.sweep.report.fork_readings import fork_feed
from engine.sweep.report.paper_decouple_readings import decouple_paper
from engine.sweep.report.progress_readings import progress
from engine.sweep.report.readings import (
    Reading,
    Row,
    budget_of,
    by_seed,
    diffs,
    direction,
    generalized,
    geo_ratio,
    median,
    part,
    rows,
    select,
    sooner,
    spread,
    steps,
)
from engine.sweep.report.starved_readings import app_c4
from engine.sweep.report.verdicts import Outcome, Part
from engine.sweep.spec import Group


def _n(group: Group) -> int:
    return len(group.spec.seeds)


def _ops(group: Group) -> list[str]:
    return [str(v) for v in group.spec.grid.get("data.op", [group.base.data.op])]


def _tasks(group: Group) -> str:
    ops = _ops(group)
    return f"{_n(group)} × {len(ops)} ({', '.join(ops)})"


def fig2(group: Group) -> Reading:
    """Fig. 2 (§3): without embeddings (eq. 1) add is learned and mul fails; with them (eq. 2) both
    generalize, mul after a delay."""
    rs = rows(group)
    emb, raw = select(rs, "embed"), select(rs, "noembed")
    emb_add, emb_mul = select(emb, data__op="add"), select(emb, data__op="mul")
    raw_add, raw_mul = select(raw, data__op="add"), select(raw, data__op="mul")
    gen = Outcome([r.gen is not None for r in emb])
    fail_mul = Outcome([r.gen is None for r in raw_mul], [r.gen is not None for r in raw_mul])
    learn_add = Outcome([r.gen is not None for r in raw_add], [r.gen is None for r in raw_add])
    delay, _, _ = sooner(emb_add, emb_mul)
    chance = 1 / group.base.data.p
    raw_val = [r.final["val_acc"] for r in raw_mul if "val_acc" in r.final]  # results.csv's final_val_acc
    b = budget_of(rs)
    parts = [
        part("with embeddings, add and mul generalize", gen, f"{gen.k_of_n('members')} reach 95% val by step {b}"),
        part("without embeddings, mul fails", fail_mul, f"{fail_mul.k_of_n('seeds')} stay below 95% val"),
        part("without embeddings, add is learned", learn_add, f"{learn_add.k_of_n('seeds')} reach 95% val"),
        part("with embeddings, mul after add", delay, f"mul later than add in {delay.k_of_n('seeds')}"),
    ]
    gm, ga = [r.gen for r in emb_mul if r.gen], [r.gen for r in emb_add if r.gen]
    values = {
        "chance": f"{chance:.3f}",
        "raw_mul_val": spread(raw_val),
        "emb_add": steps(median(ga)) if ga else "-",
        "emb_mul": steps(median(gm)) if gm else "-",
        "budget": b,
        "delay_k": delay.k_of_n("seeds"),
    }
    head = (
        f"with embeddings, median step to 95% val: add {values['emb_add']}, mul {values['emb_mul']}; "
        f"without, mul final val {spread(raw_val)} (chance {values['chance']})"
    )
    return Reading(parts, head, f"{gen.k_of_n()} embed members generalize", _tasks(group), values)


def sec43(group: Group) -> Reading:
    """§4.3: frozen embeddings converge slowly; small initial embeddings converge faster."""
    rs = rows(group)
    default, small, frozen = select(rs, "default"), select(rs, "small_init"), select(rs, "frozen")
    faster, both, _ = sooner(small, default)
    d = [a - b for a, b in both]
    slow, _, _bounds = sooner(default, frozen)
    g = sum(r.gen is not None for r in frozen)
    b = budget_of(rs)
    if g == 0:  # slow cannot be told from never within the budget
        slow = Outcome([None] * len(frozen))
    parts = [
        part("small initial embeddings converge faster", faster, f"{faster.k_of_n('seeds')} fewer steps to 95% val"),
        part(
            "frozen embeddings converge slowly",
            slow,
            f"{g} of {len(frozen)} frozen seeds reach 95% val by step {b}"
            + (": slow cannot be told from never" if g == 0 else f"; later than default in {slow.k_of_n('seeds')}"),
        ),
    ]
    values = {
        "small_minus_default": spread(d, ",.0f", sign=True),
        "small_k": faster.k_of_n("seeds"),
        "frozen_gen": f"{g} of {len(frozen)}",
        "budget": b,
    }
    head = (
        f"small − default init, steps to 95% val: {values['small_minus_default']}; "
        f"frozen: {values['frozen_gen']} reach 95% by step {b}"
    )
    return Reading(parts, head, faster.k_of_n("seeds fewer"), _tasks(group), values)


def fig6(group: Group) -> Reading:
    """Fig. 6 (§4.3): Adam-LR (c = 10) reaches 95% val in fewer steps than Adam on every task."""
    rs = rows(group)
    parts, pooled, agree = [], [], []
    for op in _ops(group):
        o, both, _bounds = sooner(select(rs, "adamlr", data__op=op), select(rs, "adam", data__op=op))
        pooled += both
        agree += list(o.agree)
        note = f"; Adam-LR/Adam {geo_ratio(both)}" if both else ""
        parts.append(part(f"faster on {op}", o, f"{o.k_of_n('seeds fewer steps')}{note}"))
    allp = Outcome(agree)
    held = [op for op, p in zip(_ops(group), parts, strict=True) if p.state == "holds"]
    values = {
        "pooled": geo_ratio(pooled),
        "holds_on": ", ".join(held) or "no task",
        "not_on": ", ".join(op for op in _ops(group) if op not in held) or "none",
    }
    head = f"Adam-LR / Adam, steps to 95% val, pairs where both reached: {values['pooled']}"
    return Reading(parts, head, allp.k_of_n("pairs fewer"), _tasks(group), values)


def _column_median(group: Group, row: Row, col: str, upto: float = math.inf, ratio_of: str = "") -> float | None:
    """The median over a member's evaluations (steps <= upto) of `col` (or col / ratio_of)."""
    vals = []
    for r in read_metrics(group.member_dir(row.member)):
        a = r.get(col, math.nan)
        v = a / r.get(ratio_of, math.nan) if ratio_of else a
        if r["step"] <= upto and math.isfinite(v):
            vals.append(v)
    return median(vals) if vals else None


def fig7(group: Group) -> Reading:
    """Figs. 7, 9 (§4.1, App. C.1): λmax(W)/λmax(E) > 1 under Adam, and nearer 1 under Adam-LR; the median
    over the evaluations every member logged (steps up to the shortest run's end)."""
    from engine.probes.hessian import block_columns

    rs = rows(group)
    e_col, w_col = block_columns(group.config(rs[0].member).probe)
    upto = min(float(r.raw["steps"]) for r in rs)
    ratio = {r.member.id: _column_median(group, r, w_col, upto, ratio_of=e_col) for r in rs}
    adam, lr = select(rs, "adam"), select(rs, "adamlr")
    ra = [x for r in adam if (x := ratio[r.member.id]) is not None]
    rl = [x for r in lr if (x := ratio[r.member.id]) is not None]
    above = direction([x - 1 for x in ra])
    lb = by_seed(lr)
    closer = direction(
        [
            abs(math.log(ratio[r.member.id])) - abs(math.log(ratio[lb[r.member.seed].member.id]))  # type: ignore[arg-type]
            for r in adam
            if r.member.seed in lb and ratio[r.member.id] and ratio[lb[r.member.seed].member.id]
        ]
    )
    parts = [
        part("λmax(E) < λmax(W) under Adam", above, f"W/E above 1 in {above.k_of_n('seeds')}"),
        part("Adam-LR brings them closer", closer, f"nearer 1 under Adam-LR in {closer.k_of_n('seeds')}"),
    ]
    values = {"adam": spread(ra, ".1f"), "adamlr": spread(rl, ".1f"), "upto": steps(upto), "e": e_col, "w": w_col}
    head = f"λmax(W)/λmax(E), median over steps 0–{values['upto']}: Adam {values['adam']}, Adam-LR {values['adamlr']}"
    return Reading(parts, head, above.k_of_n("W above E under Adam"), _tasks(group), values)


STABLE = 0.10  # rank(E) "stays stable": within this share of its first measured value (our reading)


def fig10(group: Group) -> Reading:
    """Fig. 10 (§4.1): rank(EW) falls in every setup; rank(W) has three phases; rank(E) stays stable."""
    rs = rows(group)
    falls = direction([r.first["rank_EW"] - r.final["rank_EW"] for r in rs if "rank_EW" in r.final])
    change = [(r.final["rank_E"] - r.first["rank_E"]) / r.first["rank_E"] for r in rs if r.first.get("rank_E")]
    stable = Outcome([abs(c) <= STABLE for c in change], [False] * len(change))
    parts = [
        part("rank(EW) falls", falls, f"last below first in {falls.k_of_n('members')}"),
        part(
            "rank(E) stays stable",
            stable,
            f"within {STABLE:.0%} of its first value in {stable.k_of_n('members')}",
            judged=f"the paper gives no threshold for 'stable'; {STABLE:.0%} is ours",
        ),
        Part(
            "rank(W) has three phases",
            "unread",
            "a shape, read from the figure",
            "no mechanical test of a curve's phases",
        ),
    ]
    ew = {a: [r.final["rank_EW"] for r in select(rs, a) if "rank_EW" in r.final] for a in group.spec.arms}
    values = {f"ew_{a}": spread(v, ".1f") for a, v in ew.items()}
    values["e_change"] = f"{100 * min(change):+.0f}% to {100 * max(change):+.0f}%".replace("-", "−")
    head = "last rank(EW): " + "; ".join(f"{a} {values[f'ew_{a}']}" for a in ew)
    return Reading(parts, head, falls.k_of_n("members, rank(EW) falls"), _tasks(group), values)


def fig11(group: Group) -> Reading:
    """Fig. 11 (§4.1): clear Fourier peaks in E for add and mul, diffuse for div: the top-5 share of the last
    spectrum, each task against div, paired by seed."""
    rs = rows(group)

    def top(r: Row) -> float | None:
        return r.final.get("fourier_top")

    div = select(rs, data__op="div")
    parts, values = [], {}
    for op in ("add", "mul"):
        d = diffs(select(rs, data__op=op), div, top)
        o = direction(d)
        values[op] = spread(d, ".3f", sign=True)
        parts.append(part(f"{op} peaks clearer than div", o, f"top-5 share above div's in {o.k_of_n('seeds')}"))
    head = f"top-5 spectral share, task − div: add {values['add']}, mul {values['mul']}"
    return Reading(
        parts,
        head,
        "; ".join(f"{p.text.split()[0]} {p.evidence.split(' in ')[-1]}" for p in parts),
        _tasks(group),
        values,
    )


def fig5(group: Group) -> Reading:
    """Fig. 5 (§4.3): small c under-updates E (‖ΔE‖/‖ΔW‖ over the first 100 steps below c = 1's), large c is
    unstable (diverges), c near 10 balances (judged: 600 steps)."""
    rs = rows(group)
    cs = sorted({float(r.member.values["optim.lr_ratio"]) for r in rs})
    small, one, big = cs[0], 1.0, cs[-1]
    d: list[float] = []  # paired by seed within each task
    for op in _ops(group):
        d += diffs(
            select(rs, optim__lr_ratio=small, data__op=op),
            select(rs, optim__lr_ratio=one, data__op=op),
            lambda r: r.first.get("update_ratio"),
        )
    under = direction(d, positive=False)
    top = select(rs, optim__lr_ratio=big)
    unstable = Outcome([r.status == "diverged" for r in top], [r.status != "diverged" for r in top])
    diverged = sum(r.status == "diverged" for r in rs)
    parts = [
        part(f"small c under-updates E (c = {small:g} against 1)", under, f"ratio lower in {under.k_of_n('pairs')}"),
        part(f"large c is unstable (c = {big:g})", unstable, f"{unstable.k_of_n('members')} diverged"),
        Part(
            "c near 10 balances",
            "unread",
            f"final val after {budget_of(rs)} steps",
            "a balance is a judgement over the whole curve of c; the budget ends before most members generalize",
        ),
    ]
    first = {
        c: [r.first["update_ratio"] for r in select(rs, optim__lr_ratio=c) if "update_ratio" in r.first]
        for c in (small, one)
    }
    late: list[float] = []  # the same pairs at the last evaluation
    for op in _ops(group):
        late += diffs(
            select(rs, optim__lr_ratio=small, data__op=op),
            select(rs, optim__lr_ratio=one, data__op=op),
            lambda r: r.final.get("update_ratio"),
        )
    last = {c: median([r.final["update_ratio"] for r in select(rs, optim__lr_ratio=c)]) for c in cs}
    low = [c for c in cs if c <= one]
    values = {
        "small": spread(first[small], ".2f"),
        "one": spread(first[one], ".2f"),
        "diverged": f"{diverged} of {len(rs)}",
        "late_k": direction(late, positive=False).k_of_n("pairs"),
        # the median ratio at the last evaluation per c up to 1: in order of c or not
        "late_low": ", ".join(f"c = {c:g} {last[c]:.2f}" for c in low),
        "late_ordered": "in order of c"
        if all(a <= b for a, b in itertools.pairwise(last[c] for c in low))
        else "not in order of c",
    }
    head = (
        f"‖ΔE‖/‖ΔW‖ over steps 0–100: c = {small:g} {values['small']}, c = 1 {values['one']}; "
        f"{values['diverged']} members diverged"
    )
    return Reading(
        parts, head, under.k_of_n("pairs lower at small c"), f"{_n(group)} × {len(_ops(group))} × {len(cs)} c", values
    )


def appb(group: Group) -> Reading:
    """App. B, eq. 23: the update ratio ‖ΔE‖/‖ΔW‖ grows with c, by about c (within a factor 2, our reading)."""
    rs = rows(group)
    med = {r.member.id: _column_median(group, r, "update_ratio") for r in rs}
    adam, c10 = select(rs, "adam"), select(rs, "c10")
    ab = by_seed(adam)
    q = [
        med[r.member.id] / med[ab[r.member.seed].member.id]  # type: ignore[operator]
        for r in c10
        if r.member.seed in ab and med[r.member.id] and med[ab[r.member.seed].member.id]
    ]
    grows = direction([x - 1 for x in q])
    c = float(group.spec.arms["c10"]["optim.lr_ratio"])
    near = Outcome([c / 2 <= x <= 2 * c for x in q], [x < 1 for x in q])
    parts = [
        part("the ratio grows with c", grows, f"c = {c:g} above Adam in {grows.k_of_n('seeds')}"),
        part(f"by about c ({c:g}×)", near, f"within {c / 2:g}–{2 * c:g}× in {near.k_of_n('seeds')}"),
    ]
    values = {"gain": spread(q, ".2f"), "c": f"{c:g}"}
    head = f"median ‖ΔE‖/‖ΔW‖, c = {c:g} over Adam, per seed: {values['gain']}× for {c:g}× c"
    return Reading(parts, head, grows.k_of_n("seeds"), _tasks(group), values)


def _adjacent(group: Group, key: str, other: str, faster_high: bool) -> tuple[Outcome, list[str]]:
    """Per value of `other`, each adjacent pair of `key`'s values, paired by seed: is the higher value faster
    (`faster_high`) or slower? The evidence per pair of values."""
    rs = rows(group)
    vals = sorted({float(v) for v in group.spec.grid[key]})
    agree: list[bool | None] = []
    opp: list[bool] = []
    notes = []
    kk, ok = key.replace(".", "__"), other.replace(".", "__")
    for ov in group.spec.grid[other]:
        for lo, hi in itertools.pairwise(vals):
            a, b = select(rs, **{kk: hi, ok: ov}), select(rs, **{kk: lo, ok: ov})
            o, _, _ = sooner(a, b) if faster_high else sooner(b, a)
            agree += list(o.agree)
            opp += list(o.opposite)
            notes.append(f"{other.split('.')[-1]} {ov}, {lo:g}→{hi:g}: {o.k_of_n()}")
    return Outcome(agree, opp), notes


def wd_init(group: Group) -> Reading:
    """Eqs. 8-9 (§4.1): time to converge falls with weight decay and grows with the initial scale α, each
    adjacent pair of values at every value of the other factor, paired by seed."""
    wd, wd_notes = _adjacent(group, "optim.weight_decay", "model.embed_init_scale", faster_high=True)
    al, al_notes = _adjacent(group, "model.embed_init_scale", "optim.weight_decay", faster_high=False)
    parts = [
        part("larger weight decay, sooner", wd, "; ".join(wd_notes)),
        part("larger initial scale, later", al, "; ".join(al_notes)),
    ]
    rs = rows(group)
    values = {"generalized": generalized(rs), "budget": budget_of(rs)}
    head = (
        f"{values['generalized']} members reach 95% val by step {values['budget']}; "
        f"pairs in the direction: wd {wd.k_of_n()}, α {al.k_of_n()}"
    )
    return Reading(parts, head, f"wd {wd.k_of_n()}; α {al.k_of_n()}", f"{_n(group)} × 1 (mul) × 3 × 3 grid", values)


def fig12(group: Group) -> Reading:
    """Figs. 12-13 (App. C.4): grokking, a delay between fitting and 95% val, across lr × batch: a part per
    batch size, holding when every member at that batch (both lrs) generalizes after a delay. A member that
    does not reach 95% val by the budget cannot show it, so its batch is unread. The lrs' order is a value."""
    rs = rows(group)
    parts = []
    for bs in group.spec.grid["train.batch_size"]:
        cell = select(rs, train__batch_size=bs)
        o = Outcome([(float(r.raw.get("grokking_delay") or 0) > 0) if r.gen is not None else None for r in cell])
        reached = sum(r.gen is not None for r in cell)
        delayed = sum(x is True for x in o.agree)
        note = (
            f"{reached} of {len(cell)} members reach 95% val by step {budget_of(cell)}, {delayed} of them after a delay"
        )
        parts.append(part(f"grokking at batch {bs}", o, note))
    lrs = sorted({float(v) for v in group.spec.grid["optim.lr"]})
    agree: list[bool | None] = []
    for bs in group.spec.grid["train.batch_size"]:
        hi, lo = select(rs, optim__lr=lrs[-1], train__batch_size=bs), select(rs, optim__lr=lrs[0], train__batch_size=bs)
        agree += list(sooner(hi, lo)[0].agree)
    dl = [float(r.raw["grokking_delay"]) for r in rs if r.raw.get("grokking_delay")]
    values = {
        "delay": f"{min(dl):,.0f}–{max(dl):,.0f}" if dl else "-",
        "generalized": generalized(rs),
        "lr_sooner": Outcome(agree).k_of_n("pairs"),
        "lr_hi": f"{lrs[-1]:g}",
        "lr_lo": f"{lrs[0]:g}",
    }
    head = f"{values['generalized']} members reach 95% val, each after a delay of {values['delay']} steps"
    return Reading(
        parts,
        head,
        f"lr {lrs[-1]:g} sooner than {lrs[0]:g} in {values['lr_sooner']}",
        f"{_n(group)} × 1 (mul) × 6 cells",
        values,
    )


READERS: dict[str, Callable[[Group], Reading]] = {
    "decouple_factorial": decouple_factorial,
    "decouple_direction": decouple_direction,
    "cure_decouple": cure_decouple,
    "cure_skew_mul": cure_skew_mul,
    "fig2_embeddings": fig2,
    "sec43_init": sec43,
    "fig6_optimizers": fig6,
    "fig7_hessian": fig7,
    "fig10_rank": fig10,
    "fig11_fourier": fig11,
    "fig5_c_sensitivity": fig5,
    "appb_update_ratio": appb,
    "wd_init": wd_init,
    "fig12_lr_batch": fig12,
    "fig4_sampling": fig4_sampling,
    "fig4_token_skew": token_skew,
    "fig4_epochs": fig4_epochs,
    "fig12_lr_batch_starved": app_c4,
    "fork_feed_starved": fork_feed,
    "progress_phases": progress,
    "decouple": decouple,
    "decouple_paper": decouple_paper,
    "fig6_adaptive": adaptive,
    "skew_fixes_mul": fixes,
}
