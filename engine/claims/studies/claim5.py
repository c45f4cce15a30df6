"""Study: λmax(E) ≪ λmax(W) under Adam; Adam-LR brings them closer (Figs. 7, 9)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    Row,
    direction,
    part,
    rows,
    seeds_by_tasks,
    select,
    spread,
    steps,
)
from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group
from engine.rundir import read_metrics

EARLY = 200  # the first Hessian probe after step 0 (fig7_hessian: hessian_every 200), before either arm fits


@dataclass(frozen=True)
class Curve:
    """One member's Hessian probes: (step, λmax(E), λmax(W)) in step order, and its phase steps."""

    probes: list[tuple[float, float, float]]
    memorized: float | None
    generalized: float | None

    def at(self, step: float | None) -> tuple[float, float, float] | None:
        """The first probe at or after `step` (the probes are `every` steps apart: the readout names its step)."""
        if step is None:
            return None
        return next((p for p in self.probes if p[0] >= step), None)

    def ratio(self, step: float | None) -> float | None:
        p = self.at(step)
        return None if p is None or p[1] <= 0 else p[2] / p[1]


def _curve(group: Group, r: Row, e_col: str, w_col: str) -> Curve:
    probes = [
        (x["step"], x[e_col], x[w_col])
        for x in read_metrics(group.member_dir(r.member))
        if math.isfinite(x.get(e_col, math.nan)) and math.isfinite(x.get(w_col, math.nan))
    ]
    m = r.raw.memorized_step
    return Curve(probes, None if m is None else float(m), r.gen)


def _closer(a: list[tuple[Row, Curve]], b: dict[int, Curve], at: str) -> tuple[Outcome, list[float]]:
    """Per seed: Adam-LR's ratio nearer 1 (|log| smaller) than Adam's, each at its own phase step `at`."""
    d = []
    for r, c in a:
        lr = b.get(r.member.seed)
        x = c.ratio(getattr(c, at))
        y = None if lr is None else lr.ratio(getattr(lr, at))
        if x and y:
            d.append(abs(math.log(x)) - abs(math.log(y)))
    return direction(d), d


def _ratios(cs: list[Curve], at: str | float) -> list[float]:
    return [x for c in cs if (x := c.ratio(getattr(c, at) if isinstance(at, str) else at)) is not None]


def _turn(c: Curve, col: int) -> float | None:
    """The probe step where λmax of a block peaks (step 0 aside: the start is not a turn)."""
    later = [p for p in c.probes if p[0] > 0]
    return max(later, key=lambda p: p[col])[0] if later else None


def fig7(group: Group) -> Reading:
    """Figs. 7, 9 (§4.1, App. C.1): λmax(W)/λmax(E) > 1 under Adam, and nearer 1 under Adam-LR, read at each
    member's memorization and generalization (the first Hessian probe at or after each); and Fig. 7's timing:
    train accuracy reaches 100% as λmax(W) turns down, val accuracy rises as λmax(E) falls."""
    from engine.probes.hessian import block_columns

    rs = rows(group)
    cfg = group.config(rs[0].member)
    e_col, w_col = block_columns(cfg.probe)
    every = float(cfg.probe.hessian_every)
    curves = {r.member.id: _curve(group, r, e_col, w_col) for r in rs}
    adam = [(r, curves[r.member.id]) for r in select(rs, "adam")]
    lr = {r.member.seed: curves[r.member.id] for r in select(rs, "adamlr")}
    above = direction([x - 1 for _, c in adam for at in ("memorized", "generalized") if (x := c.ratio(getattr(c, at)))])
    at_m, _ = _closer(adam, lr, "memorized")
    at_g, _ = _closer(adam, lr, "generalized")
    # Fig. 7's timing, every member: λmax(W) peaks within one probe of the fit; λmax(E) falls from its peak, which
    # comes before generalization, to the probe at generalization
    w_turn = [
        abs(t - c.memorized) <= every
        for c in curves.values()
        if c.memorized is not None and (t := _turn(c, 2)) is not None
    ]
    e_fall: list[bool | None] = []
    for c in curves.values():
        t, g = _turn(c, 1), c.at(c.generalized)
        peak = next((p for p in c.probes if p[0] == t), None)
        e_fall.append(None if g is None or peak is None else (peak[0] <= g[0] and g[1] < peak[1]))
    w_o, e_o = Outcome(w_turn, [not x for x in w_turn]), Outcome(e_fall)
    parts = [
        part(
            "λmax(E) < λmax(W) under Adam",
            above,
            f"W/E above 1 at memorization and at generalization in {above.k_of_n('readings')} (3 seeds × 2)",
        ),
        part(
            "Adam-LR brings them closer, at memorization",
            at_m,
            f"nearer 1 under Adam-LR in {at_m.k_of_n('seeds')}",
        ),
        part(
            "Adam-LR brings them closer, at generalization",
            at_g,
            f"nearer 1 under Adam-LR in {at_g.k_of_n('seeds')}",
        ),
        part(
            "train accuracy reaches 100% as λmax(W) turns down (Fig. 7)",
            w_o,
            f"λmax(W) peaks within {every:,.0f} steps of memorization in {w_o.k_of_n('members')}",
        ),
        part(
            "val accuracy rises as λmax(E) falls (Fig. 7)",
            e_o,
            f"λmax(E) peaks before generalization and is lower at it in {e_o.k_of_n('members')}",
        ),
    ]
    arms = {"adam": [c for _, c in adam], "adamlr": list(lr.values())}
    ks = {"above_k": above, "m_k": at_m, "g_k": at_g, "w_k": w_o, "e_k": e_o}
    values = {"every": steps(every), "early": steps(EARLY), "e": e_col, "w": w_col}
    values |= {k: o.k_of_n() for k, o in ks.items()}
    for name, cs in arms.items():
        for key, at in (("m", "memorized"), ("g", "generalized"), ("early", EARLY)):
            values[f"{name}_{key}"] = spread(_ratios(cs, at), ".1f")
        values[f"{name}_w_turn"] = ", ".join(steps(t) for c in cs if (t := _turn(c, 2)) is not None)
        values[f"{name}_mem"] = ", ".join(steps(c.memorized) for c in cs if c.memorized is not None)
    head = (
        f"λmax(W)/λmax(E) at memorization: Adam {values['adam_m']}, Adam-LR {values['adamlr_m']}; at "
        f"generalization: Adam {values['adam_g']}, Adam-LR {values['adamlr_g']}"
    )
    return Reading(parts, head, above.k_of_n("W above E under Adam"), seeds_by_tasks(group), values)


CLAIM = Claim(
    "claim5",
    "5",
    "λmax(E) ≪ λmax(W) under Adam; Adam-LR brings them closer (Figs. 7, 9)",
    "fig7_hessian",
    "partly",
    "W above E under Adam ({above_k}); Adam-LR closer at M {m_k}, at G {g_k}; W turns with the fit {w_k}; "
    "E falls as val rises {e_k}",
    tail=3,
    figure="fig7",
    read=fig7,
    row=50,
    paper=5,
    plan="5: λmax(E) ≪ λmax(W) under Adam (Figs. 7, 9)",
)
