"""The cause study's figures (§4.2, eqs. 3-6): each arm's final value per parent cell, arms side by side.

A fork arm of a `from = "*"` study is named PARENT_FORK (engine/sweep/spec.py): one panel per parent arm,
one point per fork arm with the mean over seeds and the seeds' range (below 8 seeds), so the arms of a
contrast sit next to each other. Used by the claims decouple_factorial, decouple_direction and
cure_decouple (grok_tui/figures/claims.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from engine.config import ConfigError
from engine.records.group import GroupRecord
from grok_tui.figures import style
from grok_tui.figures.data import Curve
from grok_tui.figures.draw import Panel


def _by_cell(group: GroupRecord, arms: list[str], parents: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Parent arm -> [(arm, its short name)] of the arms that fork it (or, with no forks, share its prefix)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for p in parents:
        mine = [(a, a.removeprefix(p + "_")) for a in arms if a.startswith(p + "_")]
        if mine:
            out[p] = mine
    return out


def arm_points(
    group: GroupRecord, metric: str, parents: list[str], with_parent: bool = False, tail: int = 1
) -> list[Panel]:
    """One panel per parent arm: each of its arms' final `metric` (mean of the last `tail` evaluations) as a
    point with the seeds' range; `with_parent`: the parent arm itself first, as `base`."""
    try:
        finals = group.finals([metric], tail)
    except ConfigError:  # no member logged it (the targets probe off): no panel
        return []
    arms = list(dict.fromkeys(m.arm for m in group.members))
    panels = []
    for parent, mine in _by_cell(group, arms, parents).items():
        shown = ([(parent, "base")] if with_parent else []) + mine
        xs, ys, lo, hi, ticks = [], [], [], [], []
        for k, (arm, short) in enumerate(shown):
            vals = [finals[m.id][metric] for m in group.members if m.arm == arm and m.id in finals]
            vals = [v for v in vals if math.isfinite(v)]
            if not vals:
                continue
            xs.append(float(k))
            ys.append(sum(vals) / len(vals))
            lo.append(min(vals))
            hi.append(max(vals))
            ticks.append((float(k), short))
        if not xs:
            continue
        curve = Curve(metric, xs, ys, lo, hi, n=len(group.spec.seeds))  # one series: no legend, the y label says it
        ylabel = f"{style.label(metric)}\n(mean, range of {len(group.spec.seeds)} seeds)"
        title = style.arm_title(parent)
        panels.append(
            Panel(
                title,
                [metric],
                [curve],
                xlabel="",
                kind="dots",
                log_x=False,
                xticks=ticks,
                ylim=(0.0, 1.05),
                ylabel=ylabel,
            )
        )
    return panels


def _parents(group: GroupRecord) -> list[str]:
    return list(group.spec.arms)


def factorial(group: GroupRecord) -> list[Panel]:
    """val_acc_target and target_norm after 500 steps of each factorial arm, per parent cell."""
    panels = arm_points(group, "val_acc_target", _parents(group))
    norms = arm_points(group, "target_norm", _parents(group))
    for p in norms:
        p.ylim = None
    return panels + norms


def direction(group: GroupRecord) -> list[Panel]:
    """val_acc_target one frozen step after the rows are set at the ring's radius, per direction and cell."""
    return arm_points(group, "val_acc_target", _parents(group))


def cure(metrics: tuple[str, ...]) -> Callable[[GroupRecord], list[Panel]]:
    """Each cure arm beside its cell's plain run, per cell: arms named CELL and CELL_CURE, as `grok report`'s cure
    table pairs them (engine/sweep/report/cures.py)."""

    def build(group: GroupRecord) -> list[Panel]:
        from engine.sweep.report.cures import cure_cells

        cells = list(dict.fromkeys(cell for cell, _, _ in cure_cells(list(group.spec.arms))))
        panels = [p for m in metrics for p in arm_points(group, m, cells, with_parent=True, tail=5)]
        for p in panels:
            if not p.metrics[0].startswith("val_acc"):  # a row's norm runs to several ring radii without decay
                p.ylim = None
        return panels

    return build
