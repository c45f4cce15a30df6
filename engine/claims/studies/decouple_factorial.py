"""Study: What shortens a starved row (ours, §4.2, eqs. 3-6): decay, draws or pairs?"""

from __future__ import annotations

import math

from engine.claims.cause_pairs import CELLS, _cell, _pooled, _tasks
from engine.claims.claim import Claim
from engine.claims.readings import Reading, direction, part
from engine.claims.verdicts import Part
from engine.records.group_dir import Group, Member
from engine.records.stats import range_text
from engine.rundir import read_metrics, read_summary
from engine.sweep.report.factorial import Contrast

FACTORS_READ = (  # (factor, what moving it alone from the starved arm does, in a part's words)
    ("decay", "decay off raises the targets' accuracy"),
    ("draws", "more draws raise the targets' accuracy"),
    ("pairs", "more pairs raise the targets' accuracy"),
)


def _range(xs: list[float]) -> str:
    """ "0.97–1.01 (n = 30)": the balance's range over pairs and cells (pooled: no interval)."""
    return f"{range_text(min(xs), max(xs), '.2f')} (n = {len(xs)})" if xs else "-"


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
CEILING = "m3_r1"  # the cell whose targets are at their ceiling already: its rows are not starved


def _balance(group: Group, m: Member) -> float | None:
    """The balance probe over a fork's own window: the loss gradient's push along the target rows summed, over
    the decay's pull summed (Σgrad / |Σdecay|); 1 where the two cancel, as on any row that holds its length."""
    d = group.member_dir(m)
    at = read_summary(d).fork_step
    if at is None:
        return None
    rows = [r for r in read_metrics(d) if r["step"] > at]
    grad = sum(v for r in rows if math.isfinite(v := r.get("target_grad_step", math.nan)))
    decay = sum(v for r in rows if math.isfinite(v := r.get("target_decay_step", math.nan)))
    return grad / abs(decay) if decay else None


def _balances(group: Group) -> dict[tuple[str, int], tuple[float | None, float | None]]:
    """Per parent arm and seed: the balance of the starved fork and of the fork rescaled to the ring's radius
    (decay on in both)."""
    res = group.results()
    ended = [m for m in group.members if m.fork_of and m.id in res and res[m.id].ended]
    out: dict[tuple[str, int], tuple[float | None, float | None]] = {}
    for m in ended:
        if m.arm.endswith("_" + STARVED):
            key = (m.arm.removesuffix("_" + STARVED), m.seed)
            out[key] = (_balance(group, m), out.get(key, (None, None))[1])
        elif m.arm.endswith("_rescaled_500"):
            key = (m.arm.removesuffix("_rescaled_500"), m.seed)
            out[key] = (out.get(key, (None, None))[0], _balance(group, m))
    return out


ROOM = 0.95  # an accuracy part reads the pairs whose starved arm ends below this: room to rise


MIN_ROOM = 3  # and is read where at least this many pairs have room (a cell at its ceiling is unread)


def factor_part(mine: list[Contrast], text: str, shared: int) -> tuple[Part | None, list[float], str]:
    """One factor's contrasts in one cell, read on the targets' accuracy: its part (`text`: the factor raises
    them), read on the pairs whose draws are as the factor names (`matched`) and whose starved arm has room to
    rise (below ROOM); or None and why not, where fewer than MIN_ROOM pairs can tell. The changes read."""
    pairs = [
        (wa.outcomes["val_acc_target"], wb.outcomes["val_acc_target"]) for c in mine if c.matched for wa, wb in c.pairs
    ]
    d = [y - x for x, y in pairs if math.isfinite(x) and math.isfinite(y) and x < ROOM]
    if len(d) < MIN_ROOM:
        why = f"room to rise in {len(d)} of {len(pairs)} pairs"
        return None, d, why if any(c.matched for c in mine) else "draws not as the factor names"
    oc = direction(d, True)
    return part(text, oc, f"{oc.k_of_n('pairs higher', shared)}; change, pooled: {_pooled(d)}"), d, ""


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
    shared = len({c.parent.split("_", 1)[0] for c in cs})  # the optimizers whose parents share each seed's split
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
        part(
            "decay off lengthens the target rows",
            o,
            f"{o.k_of_n('pairs higher', shared)}; change, pooled: {_pooled(norm)}",
        )
    ]
    unread = []
    for cell in dict.fromkeys(_cell(c.parent) for c in cs):
        for factor, text in FACTORS_READ:
            key, where = f"{cell.replace('.', '')}_{factor}", CELLS.get(cell, cell)  # a note's {key}: no dots
            mine = [c for c in cs if _cell(c.parent) == cell and c.factor == factor]
            p, d, why = factor_part(mine, f"{where}, {text}", shared)
            if p is None:
                unread.append(f"{factor} {where} ({why})")
                continue
            values[key], values[f"{key}_k"] = _pooled(d), direction(d, True).k_of_n("pairs")
            parts.append(p)
    d = _rescaled_pull(group)
    o = direction(d, True)
    values["rescaled_norm"], values["rescaled_norm_k"] = _pooled(d), o.k_of_n("pairs")
    parts.append(
        part(
            "a rescaled row keeps its length without decay (what pulls it back is decay)",
            o,
            f"{o.k_of_n('pairs longer without decay', shared)}; target norm after 500 steps, no decay − decay, pooled: "
            f"{_pooled(d)}",
        )
    )
    bal = _balances(group)
    held = [(x, y, k[0]) for k, (x, y) in sorted(bal.items()) if x is not None and y is not None]
    ob = direction([x - y for x, y, _ in held], True)
    starved = [x for x, _, a in held if _cell(a) != CEILING]
    values["balance_starved"] = _range(starved)
    values["balance_ceiling"] = _range([x for x, _, a in held if _cell(a) == CEILING])
    values["balance_rescaled"] = _range([y for _, y, _ in held])
    parts.append(
        part(
            "at the ring's radius decay outweighs the gradient (the balance probe, against the starved row)",
            ob,
            f"Σgrad/|Σdecay| lower on the rescaled row than on the starved one in {ob.k_of_n('pairs', shared)}; "
            f"rescaled {values['balance_rescaled']}, starved {values['balance_starved']}",
        )
    )
    values["unread"] = "; ".join(unread) or "none"
    head = f"from the starved arm, decay off: target norm {values['decay_target_norm']}"
    return Reading(parts, head, f"decay off: norm up in {values['decay_target_norm_k']}", _tasks(group), values)


CLAIM = Claim(
    "decouple_factorial",
    "",
    "What shortens a starved row (ours, §4.2, eqs. 3-6): decay, draws or pairs?",
    "decouple_factorial",
    "partly",
    "decay off lengthens starved rows ({decay_target_norm_k}); at r = 0.01 draws lift targets "
    "({r001_draws_k}), pairs not ({r001_pairs_k}); with one pair, pairs do ({m1_matched_pairs_k}, matched)",
    tail=1,
    metrics="val_acc_target,target_norm",
    figure="decouple_factorial",
    ours=True,
    tables=("factorial contrasts",),
    sweep_args=" --parents DECOUPLE_CAUSE_GROUP",
    read=decouple_factorial,
    row=190,
)
