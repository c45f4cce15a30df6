"""App. C.4's reading: Figs. 12-13's lr × batch grid on the token-starved split against the random split.

The starved group (`fig12_lr_batch_starved`) is read against its baseline, the random split's group kept
beside it (`fig12_lr_batch`, docs/data/), member by member: the same cell (lr, batch) and seed. A pair is
read only where the two members' configs differ in the split alone (data.split and the skew that shapes it).
"""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    Row,
    beside,
    budget_of,
    generalized,
    paired_alone,
    part,
    rows,
    sooner,
    spread,
)
from engine.claims.verdicts import Outcome, Part
from engine.records.group_dir import Group

BASELINE = "fig12_lr_batch"  # the random split's group, kept beside the starved one
SPLIT_FIELDS = ("data.split", "data.skew", "data.skew_on", "data.skew_order")  # the fields that make the split


def app_c4(group: Group) -> Reading:
    """App. C.4 (Figs. 12-13 on a skewed split): a skewed distribution of embedding updates delays
    generalization at every point of the lr × batch grid. Per cell, paired by seed, the starved member reaches
    95% val later than the random one; a pair where neither reaches by the budget cannot tell (a delay
    beyond the budget and a lower plateau look alike)."""
    base = beside(group, BASELINE)
    rs = rows(group)
    if base is None:
        parts = [Part("later than the random split", "unread", f"no kept {BASELINE} group beside this one")]
        return Reading(parts, f"{generalized(rs)} members reach 95% val", "-", f"{len(group.spec.seeds)} × 1 (mul)")
    brs = rows(base)
    lrs = sorted({float(r.member.values["optim.lr"]) for r in rs}, reverse=True)
    batches = sorted({int(r.member.values["train.batch_size"]) for r in rs})
    cells: dict[tuple[int, float], list[tuple[Row, Row]]] = {}  # (batch, lr) -> its pairs, seed by seed
    mismatched = 0
    for bs in batches:
        for lr in lrs:
            mine = [r for r in rs if r.member.values == {"optim.lr": lr, "train.batch_size": bs}]
            theirs = [r for r in brs if r.member.values == {"optim.lr": lr, "train.batch_size": bs}]
            cells[(bs, lr)], bad = paired_alone(group, mine, theirs, SPLIT_FIELDS, b_group=base)
            mismatched += bad
    pairs = [p for ps in cells.values() for p in ps]
    parts = []
    agree: list[bool | None] = []
    for bs in batches:  # a part per batch size, as Fig. 12's reading (studies/fig12.py)
        a: list[bool | None] = []
        opp: list[bool] = []
        for lr in lrs:
            cell = cells[(bs, lr)]
            o, _, _ = sooner([b for _, b in cell], [r for r, _ in cell])  # random sooner = starved later
            a += list(o.agree)
            opp += list(o.opposite)
        later = Outcome(a, opp)
        agree += a
        parts.append(part(f"later than the random split at batch {bs}", later, f"{later.k_of_n('pairs')}"))
    if mismatched:
        parts.append(Part("the pairs differ in the split alone", "fails", f"{mismatched} pairs differ in more"))
    # paired within a cell: the same seed in another cell is another member
    val = [  # (cell, the random member, starved − random final val)
        (cell, b, r.final["val_acc"] - b.final["val_acc"])
        for cell, ps in cells.items()
        for r, b in ps
        if "val_acc" in r.final and "val_acc" in b.final
    ]
    above = [cell for cell, _, d in val if d > 0]
    values = {
        "pairs": str(len(pairs)),
        "starved_gen": generalized([r for r, _ in pairs]),
        "random_gen": generalized([b for _, b in pairs]),
        # the plateau: the final val gap where the random member reached 95%, so it sits at its end, not at chance
        "val_gap": spread([d for _, b, d in val if b.gen is not None], sign=True, pooled=True),
        "val_lower_k": Outcome([d < 0 for _, _, d in val]).k_of_n("pairs"),
        "val_above": "; ".join(
            f"{sum(1 for c in above if c == cell)} at batch {cell[0]}, lr {cell[1]:g}" for cell in dict.fromkeys(above)
        )
        or "none",
        "budget": budget_of(rs),
    }
    head = (
        f"95% val by step {values['budget']}: starved {values['starved_gen']}, random {values['random_gen']}; "
        f"final val starved − random where random reached 95%: {values['val_gap']}"
    )
    return Reading(
        parts,
        head,
        Outcome(agree).k_of_n("pairs later"),
        f"{len(group.spec.seeds)} × 1 (mul) × {len(lrs) * len(batches)} cells",
        values,
    )


CLAIM = Claim(
    "app_c4",
    "",
    "The token-starved split delays generalization (paper, App. C.4)",
    "fig12_lr_batch_starved",
    "partly",
    "later than the random split, by cell and seed: batch 512 {p1}, 1024 {p2}; batch 256 unread "
    "({starved_gen} starved, {random_gen} random reach 95%)",
    tail=5,
    figure="fig12_starved",
    read=app_c4,
    row=140,
    paper=9,
    plan="(Figs. 12-13) the token-starved split delays generalization at every lr × batch",
)
