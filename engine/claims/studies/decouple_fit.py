"""Study: the factorial's draw-starved cell (r = 0.01) after 20,000 steps, and its pairs contrast over 5,000 steps
(ours, §4.2, eqs. 3-6); its reading serves decouple_plateau too."""

from __future__ import annotations

import math

import numpy as np

from engine.claims.cause_pairs import _pooled
from engine.claims.claim import Claim
from engine.claims.readings import Reading, direction, n_seeds, part, rows, spread
from engine.claims.studies.decouple_factorial import FACTORS_READ, factor_part
from engine.claims.verdicts import GUARD, Outcome
from engine.config import RunConfig
from engine.records.group_dir import Group
from engine.sweep.report.factorial import Contrast, contrasts
from engine.task import data as D
from engine.task.add_pairs import added_pairs

STARVED, LONG = "own_own_wd", "own_own_wd_5000"  # each factor is moved alone from these arms
LONG_STEPS = 5000


def target_pairs(cfg: RunConfig) -> np.ndarray:
    """Each target's training pairs in a member's training set (its split, plus `train.add_pairs`'s)."""
    pairs = D.operand_pairs(cfg.data)
    train = D.make_split(cfg.data, cfg.train.seed).train
    if cfg.train.add_pairs:
        train = np.concatenate([train, added_pairs(cfg)])
    have = D.pairs_holding(pairs[train], cfg.data.p)
    out: np.ndarray = have[D.starved_tokens(cfg.data, cfg.train.seed)]
    return out


def expected_seen(n: np.ndarray, draws: float) -> float:
    """The mean over targets of the distinct pairs a target is expected to have seen after `draws` draws, each
    one of its n pairs at random: n (1 − (1 − 1/n)^draws)."""
    n = n[n > 0].astype(float)
    return float(np.mean(n * (1 - (1 - 1 / n) ** draws))) if len(n) else math.nan


def seen(group: Group, arm: str, steps: int) -> list[tuple[float, float]]:
    """Per seed of a fork arm: (its targets' pairs, the distinct pairs a target is expected to have seen over
    the window), a target's draws per batch read from the fork's own window (the balance probe's
    target_occurrences, a mean over the targets)."""
    from engine.sweep.report.factorial import window

    res = group.results()
    out = []
    for m in group.members:
        if m.arm != arm or m.id not in res or not res[m.id].ended or (w := window(group, m)) is None:
            continue
        n = target_pairs(group.config(m))
        out.append((float(np.mean(n)), expected_seen(n, w.draws * steps)))
    return out


def _fit(group: Group) -> Outcome:
    """Per parent: it fit its training set, that is, the run logged a memorization step (train accuracy
    reached the memorization threshold, engine/train/phases.py)."""
    steps = [r.raw.memorized_step for r in rows(group) if not r.member.fork_of]
    return Outcome([m is not None for m in steps], [m is None for m in steps])


def decouple_fit(group: Group) -> Reading:
    """Issue 52, item 2: decouple_factorial's reading of one draw-starved cell, on parents that fit their training
    set (a guard: each logs a memorization step; decouple_fit trains r = 0.01 for 20,000 steps, decouple_plateau
    forks r = 0.03 at its memorization step), with the factorial's parts (each factor moved alone from
    the starved arm, 500 steps, read on matched pairs with room to rise), and the pairs contrast again over
    5,000 steps at own draws, where the all-pairs arm is expected to see most of its pairs."""
    cs = contrasts(group)
    short = [c for c in cs if c.a.endswith("_" + STARVED)]
    fit = _fit(group)
    values = {"fit_k": fit.k_of_n()}
    train = [r.final.get("train_acc", math.nan) for r in rows(group) if not r.member.fork_of]
    values["train_acc"] = spread(train)
    memorized = [float(m) for r in rows(group) if not r.member.fork_of and (m := r.raw.memorized_step) is not None]
    values["memorized"] = spread(memorized, ".0f")
    evidence = f"{fit.k_of_n('parents')}; memorized at step {values['memorized']}; train accuracy at the end "
    evidence += values["train_acc"]
    parts = [part("the parents fit their training set (a memorization step)", fit, evidence, role=GUARD)]
    unread = []
    for factor, text in FACTORS_READ:
        p, d, why = factor_part([c for c in short if c.factor == factor], f"after 500 steps, {text}", 1)
        if p is None:
            unread.append(f"{factor}, 500 steps ({why})")
            continue
        values[factor], values[f"{factor}_k"] = _pooled(d), direction(d, True).k_of_n("pairs")
        parts.append(p)
    long: list[Contrast] = [c for c in cs if c.a.endswith("_" + LONG) and c.factor == "pairs"]
    p, d, why = factor_part(long, f"after {LONG_STEPS:,} steps, more pairs raise the targets' accuracy", 1)
    if p is None:
        unread.append(f"pairs, {LONG_STEPS:,} steps ({why})")
    else:
        values["pairs_long"], values["pairs_long_k"] = _pooled(d), direction(d, True).k_of_n("pairs")
        parts.append(p)
    for arm, key in ((LONG, "own"), ("all_own_wd_5000", "all")):
        got = [s for c in long for s in seen(group, c.parent + "_" + arm, LONG_STEPS)]
        values[f"pairs_{key}"] = spread([n for n, _ in got], ".0f")
        values[f"seen_{key}"] = spread([x for _, x in got], ".0f")
    values["unread"] = "; ".join(unread) or "none"
    head = f"after {LONG_STEPS:,} steps, all pairs − own pairs at own draws: {values.get('pairs_long', '-')}"
    return Reading(parts, head, values.get("pairs_long_k", "-"), f"{n_seeds(group)} × 1 ({group.base.data.op})", values)


CLAIM = Claim(
    "decouple_fit",
    "",
    "The factorial at r = 0.01 after 20,000 steps (ours, §4.2, eqs. 3-6): decay, draws or pairs, and pairs over 5,000",
    "decouple_fit",
    "partly",
    "no parent fits ({fit_k}); raise the targets: decay off {decay_k}, more draws {draws_k}, all pairs "
    "{pairs_k} after 500 steps, {pairs_long_k} after 5,000",
    read=decouple_fit,  # the parts, fixed before the data: decouple_factorial's, and the long pairs contrast
    ours=True,
    tail=1,
    metrics="val_acc_target,target_norm,train_acc",
    tables=("factorial contrasts",),
    row=196,
)
