"""Arm comparisons for sweep reports: each arm's steps to 95% val acc as a ratio of the baseline arm's.

With `tune = [...]` in the [sweep] table, each arm is compared at its own best value of the tuned
keys (lowest median steps to 95%), so no arm wins by a larger effective learning rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from engine.records.group_dir import Group
from engine.records.stats import cells, summarize
from engine.train.phases import GENERALIZED


def _best(
    group: Group, rows: Sequence[Mapping[str, Any]], arm: str, ctx: dict[str, str]
) -> tuple[dict[str, Any], list[Any]]:
    """The tuned values (if any) and the rows of `arm` in context `ctx` at those values."""
    tune = list(group.spec.tune)
    mine = [r for r in rows if r.get("arm") == arm and all(str(r.get(k, "")) == v for k, v in ctx.items())]
    if not tune:
        return {}, mine
    best_key, best_rows, best_score = None, [], (math.inf, 0.0)
    for key, rs in cells(mine, tune).items():
        s = summarize(rs)
        score = (s["gen_median"], -(s["frac_generalized"] if s["frac_generalized"] == s["frac_generalized"] else 0))
        if best_key is None or score < best_score:
            best_key, best_rows, best_score = key, rs, score
    return (dict(zip(tune, best_key, strict=True)) if best_key else {}), best_rows


def _ctx_label(ctx: dict[str, str]) -> str:
    parts = [f"{k.split('.')[-1]}={v}" for k, v in ctx.items()]
    return f" [{', '.join(parts)}]" if parts else ""


def compare_lines(group: Group, rows: Sequence[Mapping[str, Any]], baseline: str | None = None) -> list[str]:
    """E.g. "adamlr reaches 95% val acc in 0.60× the steps of adam (5/5 seeds) [op=mul]", against the
    preset's `compare` arm or the arm `baseline` (grok report --baseline)."""
    base = baseline if baseline in group.spec.arms else group.spec.compare
    if not base or not rows:
        return []
    ctx_keys = [k for k in group.spec.grid if k not in group.spec.tune]
    contexts = [dict(zip(ctx_keys, key, strict=True)) for key in cells(rows, ctx_keys)] if ctx_keys else [{}]
    lines: list[str] = []
    for arm in group.spec.arms:
        if arm == base:
            continue
        ratios: list[float] = []
        for ctx in contexts:
            tb, rb = _best(group, rows, base, ctx)
            ta, ra = _best(group, rows, arm, ctx)
            if not ra or not rb:
                continue
            sa, sb = summarize(ra), summarize(rb)
            ma, mb = sa["gen_median"], sb["gen_median"]
            seeds = f"({sa['generalized']}/{sa['ended']} seeds; {base} {sb['generalized']}/{sb['ended']})"
            tuned = ""
            if ta or tb:
                tuned = f" tuned {', '.join(f'{k}={v}' for k, v in ta.items())} vs {', '.join(tb.values())}"
            where = _ctx_label(ctx) + tuned
            if math.isinf(mb) and math.isinf(ma):
                lines.append(f"{arm}: neither arm's median seed reached {GENERALIZED} val acc {seeds}{where}")
            elif math.isinf(mb):
                lines.append(
                    f"{arm} reaches {GENERALIZED} val acc in <{ma / sb['budget']:.2f}× the steps of {base} "
                    f"(median {ma:.0f}; {base}'s median seed did not within {sb['budget']:.0f}) {seeds}{where}"
                )
            elif math.isinf(ma):
                lines.append(
                    f"{arm}: median seed did not reach {GENERALIZED} val acc within {sa['budget']:.0f} steps; "
                    f"{base} median {mb:.0f} {seeds}{where}"
                )
            else:
                ratios.append(ma / mb)
                lines.append(
                    f"{arm} reaches {GENERALIZED} val acc in {ma / mb:.2f}× the steps of {base} "
                    f"({ma:.0f} vs {mb:.0f}) {seeds}{where}"
                )
        if len(ratios) > 1:
            gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            lines.append(f"{arm} vs {base}: geometric mean ratio {gm:.2f}× over {len(ratios)} cells")
    return lines
