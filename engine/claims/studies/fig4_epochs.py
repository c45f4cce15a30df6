"""Study: Equal epochs on the token-starved split (ours)."""

from __future__ import annotations

import math

from engine.claims.claim import Claim
from engine.claims.fig4_pairs import TAIL, _alone, _batch, _below, _in, _rise, _val
from engine.claims.readings import (
    Reading,
    budget_of,
    generalized,
    paired_alone,
    part,
    rows,
    spread,
)
from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group
from engine.rundir import read_metrics
from engine.sweep.report.tables import member_finals


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


CLAIM = Claim(
    "fig4_epochs",
    "",
    "Equal epochs on the token-starved split (ours)",
    "fig4_epochs",
    "supported",
    "at equal epochs the starved split ends below random at every batch ({below_k}); random reaches 95% val "
    "at every batch ({random_gen})",
    tail=3,
    metrics="val_acc,train_acc,val_acc_rare,val_acc_common,val_acc_absent",
    figure="fig4_epochs",
    tables=("every cell", "final value"),
    ours=True,
    read=fig4_epochs,
    row=160,
    paper=2,
    plan="2: Fig. 4's batch rows at equal epochs (Fig. 4)",
)
