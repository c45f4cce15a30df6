"""The decoupling at Fig. 4's settings (`decouple_paper`, ours after §4.2, eqs. 3-6): row norm or data?

A target token drawn in few batches gets few gradient updates while weight decay shrinks its row of E at every
step (eqs. 3-6), so its row is short. Is a starved target's deficit in its row (the norm) or in its data (its
pairs)? Read from the parents' last evaluation, their realized draws (summary.json `target_draw_ratio`) and
each fork against its parent at the fork step (engine/sweep/report/forks.py `before_after`), per seed:

1. draws cut, data intact: r = 0.01 against r = 1 per optimizer, read where the realized draws are at least
   DRAWS_APART-fold apart in every pair;
2. few pairs at ordinary draws: a one-pair cell against the data-intact cell at r = 1, read only for a
   one-pair cell whose realized draws are within DRAWS_CLOSE of the intact cell's in every pair (the arms
   then differ in the pairs alone); none such: the part is unread, with the draws that kept it so;
3. rescaled to the ring's radius (`_rescaled`, one frozen step): the targets' accuracy after against the
   parent's at the fork step, one part per starved cell;
4. the rescaled norm after 500 steps of training (`_rescaled_500`) against the norm as rescaled (`_rescaled`,
   same parent and seed): one part per starved cell;
5. the target rows trained alone on all their pairs (`_rows_all`) against the same on their own
   (`_rows_own`), same parent and seed: one part per starved cell, with the two forks' realized draws (adding
   pairs at r > 0 adds draws too; at matched draws it does not).

Every part pools Adam's and SGD's pairs as one claim; pooled values are a mean with their range (cause_pairs
`_pooled`), never an interval. A tie counts against the direction named, but in parts 3 and 5 a pair at
CEILING on both sides cannot tell (no room to rise): its part is unread unless another pair fails. The
decisions are `read`'s, a pure function of per-member numbers (`Obs`), so they are tested without training.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from engine.claims.cause_pairs import _pooled
from engine.claims.claim import Claim
from engine.claims.readings import Reading, direction, part
from engine.claims.verdicts import UNREAD, Outcome, Part
from engine.records.group_dir import Group, Member
from engine.rundir import read_summary

ACC, NORM = "val_acc_target", "target_norm"
TAIL = 1  # a parent's outcome: its last evaluation (`grok report --tail 1`), the fork step's own row
DRAWS_APART = 2.0  # part 1: the realized draw ratios at least this many times apart, pair by pair
DRAWS_CLOSE = 1.5  # part 2: at most this many times apart, pair by pair
CEILING = 1.0  # parts 3 and 5: an accuracy here cannot rise; a pair at it on both sides is undecided
INTACT, CUT = "r1", "r0.01"  # part 1's cells (the parent arm without its optimizer)
ONE_PAIR = ("m1_matched", "m1_r1")  # part 2's candidate cells, each against INTACT
CELLS = {  # the starved cells the forks start from, in a part's words
    "r0.01": "at r = 0.01 (data intact)",
    "m1_r1": "with one pair at r = 1",
    "m1_matched": "with one pair at matched draws",
    "m3_r1": "with three pairs at r = 1",
    "m3_matched": "with three pairs at matched draws",
}
OPTIMIZERS = {"adam": "Adam", "sgd": "SGD"}


@dataclass(frozen=True)
class Obs:
    """One ended member's numbers. A parent: its arm, its last evaluation's accuracy and norm, its realized
    draws. A fork: its arm, its parent's arm, its last value of each (after) and its parent's at the fork step
    (before)."""

    arm: str
    seed: int
    parent: str = ""  # a fork: its parent's arm (`adam_r0.01`); "" for a parent
    acc: float = math.nan
    norm: float = math.nan
    draws: float = math.nan  # summary.json target_draw_ratio (a fork's: over its own steps)
    acc_before: float = math.nan
    norm_before: float = math.nan

    @property
    def kind(self) -> str:
        """A fork's intervention (`rescaled`, `rescaled_500`, `rows_all`, `rows_own`); "" for a parent."""
        return self.arm.removeprefix(self.parent + "_") if self.parent else ""


def split_arm(arm: str) -> tuple[str, str]:
    """(optimizer, cell) of a parent arm: `adam_m1_r1` -> (`adam`, `m1_r1`)."""
    opt, _, cell = arm.partition("_")
    return opt, cell


def _key(cell: str) -> str:
    return cell.replace(".", "")  # a note's {key}: no dots


def _opts(opts: Sequence[str]) -> str:
    return " and ".join(OPTIMIZERS.get(o, o) for o in opts) + (" pooled" if len(opts) > 1 else "")


def _fold(x: float) -> str:
    """A ratio to 3 significant digits: 0.0152, 1.00, 121."""
    return f"{x:#.3g}".rstrip(".")


def _ratio_range(qs: Sequence[float]) -> str:
    return f"{_fold(min(qs))}–{_fold(max(qs))}×" if qs else "-"


def _parents(obs: Sequence[Obs]) -> dict[str, dict[int, Obs]]:
    """Parent arm -> seed -> its observation."""
    out: dict[str, dict[int, Obs]] = {}
    for o in obs:
        if not o.parent:
            out.setdefault(o.arm, {})[o.seed] = o
    return out


def _forks(obs: Sequence[Obs], kind: str) -> dict[tuple[str, int], Obs]:
    """(parent arm, seed) -> the fork of this kind."""
    return {(o.parent, o.seed): o for o in obs if o.parent and o.kind == kind}


def _finite(*xs: float) -> bool:
    return all(math.isfinite(x) for x in xs)


def _draws_part(parents: dict[str, dict[int, Obs]], opts: list[str], values: dict[str, str]) -> Part:
    """Part 1: with the data intact, r = 0.01 against r = 1, per seed, the optimizers pooled."""
    text = "with the data intact, draws cut to r = 0.01 lower the targets"
    d, read, why = [], [], []
    for opt in opts:
        cut, intact = parents.get(f"{opt}_{CUT}", {}), parents.get(f"{opt}_{INTACT}", {})
        seeds = [s for s in sorted(set(cut) & set(intact)) if _finite(cut[s].acc, intact[s].acc)]
        q = [intact[s].draws / cut[s].draws for s in seeds]
        if not seeds:
            why.append(f"{OPTIMIZERS.get(opt, opt)}: no pair of r = 0.01 and r = 1 ended")
            continue
        if not all(math.isfinite(x) and x >= DRAWS_APART for x in q):
            why.append(f"{OPTIMIZERS.get(opt, opt)}: realized draws not {DRAWS_APART:g}-fold apart in every pair")
            continue
        read.append(opt)
        d += [cut[s].acc - intact[s].acc for s in seeds]
    if not read:
        return Part(text, UNREAD, "; ".join(why) or "no pair of r = 0.01 and r = 1")
    o = direction(d, positive=False)
    values["draws"], values["draws_k"] = _pooled(d), o.k_of_n("pairs")
    unread = f"; unread: {', '.join(why)}" if why else ""
    return part(
        f"{text} ({_opts(read)})", o, f"{o.k_of_n('pairs lower', len(read))}; change, pooled: {_pooled(d)}{unread}"
    )


def _pairs_parts(parents: dict[str, dict[int, Obs]], opts: list[str], values: dict[str, str]) -> list[Part]:
    """Part 2: a one-pair cell against the data-intact cell at r = 1, only where the realized draws match."""
    text = "at ordinary draws, one pair lowers the targets"
    parts, why = [], []
    for cell in ONE_PAIR:
        d: list[float] = []
        read: list[str] = []
        q_all: list[float] = []  # the read pairs' draw ratios
        off: dict[str, list[float]] = {}  # per optimizer not read: its pairs' draw ratios
        for opt in opts:
            few, intact = parents.get(f"{opt}_{cell}", {}), parents.get(f"{opt}_{INTACT}", {})
            seeds = [s for s in sorted(set(few) & set(intact)) if _finite(few[s].acc, intact[s].acc)]
            q = [few[s].draws / intact[s].draws for s in seeds]
            if not seeds:
                continue  # nothing ended to compare
            if not all(math.isfinite(x) and 1 / DRAWS_CLOSE <= x <= DRAWS_CLOSE for x in q):
                off[opt] = [x for x in q if math.isfinite(x)]
                continue
            read.append(opt)
            q_all += q
            d += [few[s].acc - intact[s].acc for s in seeds]
        if off:
            q_off = [x for xs in off.values() for x in xs]
            names = ", ".join(OPTIMIZERS.get(o, o) for o in off)
            why.append(f"{CELLS.get(cell, cell)} ({names}): realized draws {_ratio_range(q_off)} the intact cell's")
        if not read:
            continue
        o = direction(d, positive=False)
        k = _key(cell)
        values[f"pairs_{k}"], values[f"pairs_{k}_k"] = _pooled(d), o.k_of_n("pairs")
        values[f"pairs_{k}_draws"] = _ratio_range(q_all)
        where = f"{CELLS.get(cell, cell)} against every pair at r = 1"
        parts.append(
            part(
                f"{text} ({where}; {_opts(read)})",
                o,
                f"{o.k_of_n('pairs lower', len(read))}; change, pooled: {_pooled(d)}; realized draws, one pair over "
                f"every pair: {_ratio_range(q_all)}",
            )
        )
    values["pairs_unread"] = "; ".join(why) or "none"
    if not parts:
        fold = f"no one-pair cell's realized draws within {DRAWS_CLOSE:g}-fold of the intact cell's in every pair"
        return [Part(text, UNREAD, f"{fold}: {values['pairs_unread']}")]
    return parts


def _rises(pairs: Sequence[tuple[float, float]]) -> Outcome:
    """Per (control, treated) pair of accuracies: does the treated end above? A pair at CEILING on both sides
    cannot tell (None: no room to rise); any other tie counts against."""
    agree = [None if a >= CEILING and b >= CEILING else b > a for a, b in pairs]
    return Outcome(agree, [b < a for a, b in pairs])


def _higher(o: Outcome) -> str:
    """ "9 of 10 pairs higher (1 at the ceiling ...)": k of n, and the pairs that could not tell."""
    u = sum(x is None for x in o.agree)
    text = f"{sum(x is True for x in o.agree)} of {len(o.agree)} pairs higher"
    return text + (f" ({u} at {CEILING:.3f} on both sides: no room to rise)" if u else "")


def _rescaled_parts(obs: Sequence[Obs], opts: list[str], values: dict[str, str]) -> list[Part]:
    """Part 3, per starved cell: each rescaled fork's accuracy after against its parent's at the fork step."""
    forks = [o for o in _forks(obs, "rescaled").values() if _finite(o.acc, o.acc_before)]
    values["rescaled_before"] = _pooled([f.acc_before for f in forks])
    values["rescaled_after"] = _pooled([f.acc for f in forks])
    values["rescaled_k"] = _higher(_rises([(f.acc_before, f.acc) for f in forks]))
    if not forks:
        return [Part(f"rescaled to the ring, the starved targets rise at once ({_opts(opts)})", UNREAD, "no fork")]
    parts = []
    for cell in _cells(obs):
        mine = [f for f in forks if split_arm(f.parent)[1] == cell]
        if not mine:
            continue
        o = _rises([(f.acc_before, f.acc) for f in mine])
        k = _key(cell)
        values[f"{k}_rescaled_before"] = _pooled([f.acc_before for f in mine])
        values[f"{k}_rescaled_after"] = _pooled([f.acc for f in mine])
        values[f"{k}_rescaled_k"] = _higher(o)
        parts.append(
            part(
                f"{CELLS.get(cell, cell)}, rescaled to the ring, the targets rise at once",
                o,
                f"{_higher(o)}; before {values[f'{k}_rescaled_before']}, after {values[f'{k}_rescaled_after']}",
            )
        )
    return parts


def _cells(obs: Sequence[Obs]) -> list[str]:
    """The starved cells the forks start from, in CELLS' order, then any other."""
    have = dict.fromkeys(split_arm(o.parent)[1] for o in obs if o.parent)
    return [c for c in CELLS if c in have] + [c for c in have if c not in CELLS]


def _fallback_parts(obs: Sequence[Obs], values: dict[str, str]) -> list[Part]:
    """Part 4, per starved cell: the norm 500 steps after the rescale against the norm as rescaled."""
    rescaled, trained = _forks(obs, "rescaled"), _forks(obs, "rescaled_500")
    parts: list[Part] = []
    matched: dict[str, list[float]] = {"d": [], "kept": [], "before": [], "after": [], "draws": []}
    parents = _parents(obs)
    for cell in _cells(obs):
        keys = [k for k in trained if split_arm(k[0])[1] == cell and k in rescaled]
        trio = [(trained[k].norm_before, rescaled[k].norm, trained[k].norm) for k in keys]
        trio = [t for t in trio if _finite(*t)]
        if not trio:
            continue
        d = [a - r for _, r, a in trio]
        kept = [(a - b) / (r - b) for b, r, a in trio if r != b]  # the share of the rescale's gain still held
        o = direction(d, positive=False)
        k = _key(cell)
        values[f"{k}_norm_before"] = _pooled([b for b, _, _ in trio])
        values[f"{k}_norm_rescaled"] = _pooled([r for _, r, _ in trio])
        values[f"{k}_norm_500"] = _pooled([a for _, _, a in trio])
        values[f"{k}_norm_kept"] = _pooled(kept)
        values[f"{k}_fallback_k"] = o.k_of_n("pairs")
        values[f"{k}_acc_500"] = _pooled([a for x in keys if math.isfinite(a := trained[x].acc)])
        parts.append(
            part(
                f"{CELLS.get(cell, cell)}, the rescaled norm falls back within 500 steps",
                o,
                f"{o.k_of_n('pairs lower', len({split_arm(x[0])[0] for x in keys}))}; target norm before the rescale "
                f"{values[f'{k}_norm_before']}, rescaled "
                f"{values[f'{k}_norm_rescaled']}, 500 steps later {values[f'{k}_norm_500']}",
            )
        )
        if cell.endswith("_matched"):
            matched["d"] += d
            matched["kept"] += kept
            matched["before"] += [b for b, _, _ in trio]
            matched["after"] += [a for _, _, a in trio]
            matched["draws"] += [
                p.draws
                for arm, seed in keys
                if (p := parents.get(arm, {}).get(seed)) is not None and math.isfinite(p.draws)
            ]
    if matched["d"]:  # the cells whose targets are drawn at the median token's rate, pooled
        values["matched_fallback_k"] = direction(matched["d"], positive=False).k_of_n("pairs")
        values["matched_norm_before"] = _pooled(matched["before"])
        values["matched_norm_500"] = _pooled(matched["after"])
        values["matched_norm_kept"] = _pooled(matched["kept"])
        values["matched_draws"] = _pooled(matched["draws"])
    return parts


def _rows_parts(obs: Sequence[Obs], values: dict[str, str]) -> list[Part]:
    """Part 5, per starved cell: the target rows trained alone on all their pairs against on their own."""
    every, own = _forks(obs, "rows_all"), _forks(obs, "rows_own")
    parts = []
    norms: dict[str, list[float]] = {"own": [], "all": []}  # the matched cells' norms after, pooled
    for cell in _cells(obs):
        keys = [k for k in every if split_arm(k[0])[1] == cell and k in own and _finite(own[k].acc, every[k].acc)]
        if not keys:
            continue
        o = _rises([(own[x].acc, every[x].acc) for x in keys])
        q = [every[x].draws / own[x].draws for x in keys]
        k = _key(cell)
        values[f"{k}_rows_own"] = _pooled([own[x].acc for x in keys])
        values[f"{k}_rows_all"] = _pooled([every[x].acc for x in keys])
        values[f"{k}_rows_k"] = _higher(o)
        values[f"{k}_rows_draws"] = _ratio_range([x for x in q if math.isfinite(x)])
        for side, forks in (("own", own), ("all", every)):
            n = [v for x in keys if math.isfinite(v := forks[x].norm)]
            values[f"{k}_rows_{side}_norm"] = _pooled(n)
            if cell.endswith("_matched"):
                norms[side] += n
        parts.append(
            part(
                f"{CELLS.get(cell, cell)}, trained alone on all their pairs the target rows are taken in",
                o,
                f"{_higher(o)}; own pairs {values[f'{k}_rows_own']}, all pairs {values[f'{k}_rows_all']}; realized "
                f"draws, all pairs over own: {values[f'{k}_rows_draws']}",
            )
        )
    if norms["own"] or norms["all"]:
        values["matched_rows_own_norm"], values["matched_rows_all_norm"] = _pooled(norms["own"]), _pooled(norms["all"])
    return parts


def read(obs: Sequence[Obs]) -> tuple[list[Part], dict[str, str]]:
    """The parts (module docstring) and the named values a page quotes, from per-member numbers."""
    parents = _parents(obs)
    opts = list(dict.fromkeys(split_arm(a)[0] for a in parents))
    values: dict[str, str] = {}
    parts = [_draws_part(parents, opts, values), *_pairs_parts(parents, opts, values)]
    parts += [*_rescaled_parts(obs, opts, values), *_fallback_parts(obs, values), *_rows_parts(obs, values)]
    return parts, values


def _draws(group: Group, m: Member) -> float:
    """A member's realized draws (summary.json target_draw_ratio; a fork's, over its own steps); NaN: none."""
    r = read_summary(group.member_dir(m)).target_draw_ratio
    return r if r is not None and math.isfinite(r) and r > 0 else math.nan


def observations(group: Group) -> list[Obs]:
    """Each ended member's numbers: a parent's last evaluation and realized draws, a fork's before and after."""
    from engine.sweep.report.forks import before_after
    from engine.sweep.report.tables import member_finals

    finals = member_finals(group, [ACC, NORM], TAIL)
    arm = {m.id: m.arm for m in group.members}
    out = []
    for m in group.members:
        if m.id not in finals:
            continue  # not ended
        if not m.fork_of:
            f = finals[m.id]
            out.append(Obs(m.arm, m.seed, acc=f.get(ACC, math.nan), norm=f.get(NORM, math.nan), draws=_draws(group, m)))
            continue
        ba = before_after(group, m, [ACC, NORM])
        (ab, aa), (nb, na) = ba.get(ACC, (math.nan, math.nan)), ba.get(NORM, (math.nan, math.nan))
        out.append(Obs(m.arm, m.seed, arm.get(m.fork_of, ""), aa, na, _draws(group, m), ab, nb))
    return out


def decouple_paper(group: Group) -> Reading:
    """§4.2, eqs. 3-6 (ours, issue 33): is a starved target's deficit in its row of E or in its pairs? The parts
    of the module docstring, each paired by seed."""
    parts, values = read(observations(group))
    head = f"targets' val accuracy, rescaled to the ring: {values['rescaled_before']} → {values['rescaled_after']}"
    n = len(group.spec.seeds)
    return Reading(parts, head, values["rescaled_k"], f"{n} × 1 ({group.base.data.op})", values)


CLAIM = Claim(
    "decouple_paper",
    "",
    "Decoupling at Fig. 4's settings (ours): row norm or data?",
    "decouple_paper",
    "partly",
    "draws cut ({draws_k}) and one pair ({pairs_m1_matched_k}, matched draws) lower the targets; rescaled, they "
    "rise; the norm falls back in 500 steps, matched draws too ({matched_fallback_k})",
    tail=1,
    metrics="val_acc_target,target_norm",
    figure="decouple_paper",
    ours=True,
    tables=("final value", "interventions"),
    sweep_args=" --parents DECOUPLE_CAUSE_GROUP",
    read=decouple_paper,
    row=180,
)
