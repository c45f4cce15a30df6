"""Study: Embeddings let the MLP generalize; mul after a delay (Fig. 2)."""

from __future__ import annotations

from engine.claims.claim import Claim
from engine.claims.readings import (
    Reading,
    budget_of,
    median,
    part,
    rows,
    seeds_by_tasks,
    select,
    sooner,
    spread,
    steps,
)
from engine.claims.verdicts import Outcome
from engine.records.group_dir import Group
from engine.sweep.report.tables import member_finals

TAIL = 5  # `grok report --tail`: the evaluations a final value is the mean of (the page's final value table)


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
    # final val as the page's "final value" table gives it: the mean of the last TAIL evaluations (one rule)
    fin = member_finals(group, ["val_acc"], TAIL)
    raw_val = [v["val_acc"] for r in raw_mul if "val_acc" in (v := fin.get(r.member.id, {}))]
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
    return Reading(parts, head, f"{gen.k_of_n()} embed members generalize", seeds_by_tasks(group), values)


CLAIM = Claim(
    "claim1",
    "1",
    "Embeddings let the MLP generalize; mul after a delay (Fig. 2)",
    "fig2_embeddings",
    "partly",
    "with embeddings both tasks generalize; without, mul fails and add is not learned ({p2}); "
    "mul after add in {delay_k}",
    tail=TAIL,
    metrics="val_acc,train_acc",
    figure="fig2",
    read=fig2,
    row=10,
    paper=1,
    plan="1: embeddings let the MLP generalize, mul after a delay (Fig. 2)",
)
