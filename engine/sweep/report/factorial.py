"""A fork factorial's contrasts (presets/decouple_factorial.toml): pairs × draws × decay on a starved row.

For each parent arm and each factor, the two fork arms whose settings differ in that factor's key alone
are paired by seed. A contrast could show the opposite of what it is read for only if its arms differ in
the factor named and in nothing else, so the realized draws are read, not assumed: each fork's target
draws per batch over its own window (the balance probe's target_occurrences summed over the rows after
the fork step, over the window's steps), and its decay along the target rows (target_decay_step).
`matched` says, per contrast, whether the draws of its two arms agree within MATCH where the factor is
not the draws, and differ by DRAWS_APART or more where it is (in the cells at matched draws, r = 0, the
two draw levels are about 10% apart by construction: no draws contrast).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from engine.records.group_dir import Group, Member, fork_settings, fork_window
from engine.records.results import ResultsRow
from engine.records.stats import put_spread, seed_interval
from engine.rundir import read_metrics, read_summary

FACTORS = {"pairs": "train.add_pairs", "draws": "train.target_draws_as", "decay": "optim.decay_sets"}
MATCH = 0.10  # realized draws per batch of a contrast's two arms agree within 10% where they should match
DRAWS_APART = 2.0  # and differ by at least this factor where the factor is the draws (matched cells: about 1.1)
OUTCOMES = ("val_acc_target", "target_norm")


@dataclass
class Window:
    """What one fork did in its own window: its target draws per batch, decay summed, and last outcomes."""

    draws: float
    decay: float
    outcomes: dict[str, float] = field(default_factory=dict)


@dataclass
class Contrast:
    """Two fork arms of one parent arm that differ in one factor, paired by seed."""

    parent: str
    factor: str
    a: str
    b: str
    pairs: list[tuple[Window, Window]]

    def ratios(self) -> list[float]:
        return [wb.draws / wa.draws if wa.draws > 0 else math.inf for wa, wb in self.pairs]

    @property
    def matched(self) -> bool:
        """The arms differ in the factor named only: draws within MATCH unless the factor is the draws."""
        rs = self.ratios()
        if not rs:
            return False
        if self.factor == "draws":
            return all(r >= DRAWS_APART or r <= 1 / DRAWS_APART for r in rs)
        return all(abs(r - 1) <= MATCH for r in rs)


def window(group: Group, m: Member) -> Window | None:
    """The fork member's own window, read from its metrics.csv after its fork step; None without the probe."""
    d = group.member_dir(m)
    at = read_summary(d).fork_step
    if at is None:
        return None
    rows = [r for r in read_metrics(d) if r["step"] > at]
    occ = [r.get("target_occurrences", math.nan) for r in rows]
    if not rows or not all(math.isfinite(v) for v in occ):
        return None
    steps = rows[-1]["step"] - at
    decay = sum(r.get("target_decay_step", 0.0) for r in rows)
    last = {k: next((v for r in reversed(rows) if math.isfinite(v := r.get(k, math.nan))), math.nan) for k in OUTCOMES}
    return Window(sum(occ) / steps, decay, last)


def levels(settings: dict[str, Any]) -> dict[str, str]:
    """A fork arm's level of each factor, from its settings."""
    return {
        "pairs": "all" if settings.get("train.add_pairs") else "own",
        "draws": str(settings.get("train.target_draws_as") or "as r"),
        "decay": "off" if settings.get("optim.decay_sets") else "on",
    }


def contrasts(group: Group) -> list[Contrast]:
    """Every contrast of the group's fork arms: per parent arm, each pair of arms one factor apart."""
    res = group.results()
    arms: dict[str, list[tuple[str, dict[str, Any], int]]] = {}
    for arm, src, table in group.spec.fork_arms():
        settings = fork_settings(table)
        if not any(k in settings for k in FACTORS.values()) or table.get("intervene") != ["only:E[targets]"]:
            continue
        arms.setdefault(src, []).append((arm, settings, fork_window(table)))
    out = []
    for src, entries in arms.items():
        for i, (a, sa, wa) in enumerate(entries):
            for b, sb, wb in entries[i + 1 :]:
                la, lb = levels(sa), levels(sb)
                differ = [f for f in FACTORS if la[f] != lb[f]]
                rest = {k for k in {*sa, *sb} if k not in FACTORS.values()}
                if len(differ) != 1 or wa != wb or any(sa.get(k) != sb.get(k) for k in rest):
                    continue
                out.append(Contrast(src, differ[0], a, b, _paired(group, a, b, res)))
    return out


def _paired(group: Group, a: str, b: str, res: dict[str, ResultsRow]) -> list[tuple[Window, Window]]:
    def by_seed(arm: str) -> dict[int, Window]:
        out = {}
        for m in group.members:
            if m.arm == arm and m.id in res and res[m.id].ended and (w := window(group, m)) is not None:
                out[m.seed] = w
        return out

    wa, wb = by_seed(a), by_seed(b)
    return [(wa[s], wb[s]) for s in sorted(wa) if s in wb]


def contrast_rows(group: Group) -> list[dict[str, Any]]:
    """One row per contrast: its arms, their realized draws per batch and decay, each outcome's mean per arm
    and the paired change b − a with its spread over seeds and k of n higher, and whether it is matched."""
    out = []
    for c in contrasts(group):
        if not c.pairs:
            continue
        row: dict[str, Any] = {"parent": c.parent, "factor": c.factor, "a": _short(c.a, c.parent)}
        row["b"] = _short(c.b, c.parent)
        put_spread(row, "draws a", seed_interval([wa.draws for wa, _ in c.pairs]))
        put_spread(row, "draws b", seed_interval([wb.draws for _, wb in c.pairs]))
        put_spread(row, "decay a", seed_interval([wa.decay for wa, _ in c.pairs]))
        put_spread(row, "decay b", seed_interval([wb.decay for _, wb in c.pairs]))
        for k in OUTCOMES:
            pairs = [(wa.outcomes[k], wb.outcomes[k]) for wa, wb in c.pairs]
            pairs = [(x, y) for x, y in pairs if math.isfinite(x) and math.isfinite(y)]
            put_spread(row, f"{k} b-a", seed_interval([y - x for x, y in pairs]))
            row[f"{k} higher"] = f"{sum(y > x for x, y in pairs)}/{len(pairs)}" if pairs else "-"
        row["matched"] = "yes" if c.matched else "NO"
        out.append(row)
    return out


def _short(arm: str, parent: str) -> str:
    return arm.removeprefix(parent + "_")
