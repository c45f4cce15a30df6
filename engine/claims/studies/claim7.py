"""Study: Clear Fourier peaks for add and mul, diffuse for div (Fig. 11)."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    Row,
    diffs,
    direction,
    part,
    rows,
    seeds_by_tasks,
    select,
    spread,
)
from engine.records.group_dir import Group


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
        seeds_by_tasks(group),
        values,
    )


CLAIM = Claim(
    "claim7",
    "7",
    "Clear Fourier peaks for add and mul, diffuse for div (Fig. 11)",
    "fig11_fourier",
    "partly",
    "add: {p0}; mul: {p1}",
    tail=3,
    figure="fig11",
    read=fig11,
    row=70,
    paper=7,
    plan="7: Fourier peaks for add and mul (Fig. 11)",
)
