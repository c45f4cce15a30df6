"""The claims of docs/REPRODUCTION.md: each one's preset, page, kept data and the verdict its page gives.

A claim with kept data (docs/data/PRESET/, `grok report GROUP --keep`) is read by
engine/sweep/report/claim_readings.py, and its verdict may be no stronger than that reading allows
(engine/sweep/report/verdicts.py). A claim without kept data from the current engine is "pending
rerun": its row names the verdict an earlier engine's runs gave, labelled as such, and no number.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path

from engine.config import ConfigError
from engine.config.presets import load_preset
from engine.rundir.files import is_group
from engine.sweep.report.claim_readings import READERS
from engine.sweep.report.readings import Reading
from engine.sweep.report.verdicts import PENDING, allowed, ceiling
from engine.sweep.spec import Group, parse_sweep


@dataclass(frozen=True)
class Claim:
    """One row of a status table and its page under docs/claims/."""

    key: str  # the page under docs/claims/, named KEY with the .md suffix
    number: str  # "1".."8" for the paper's claims; "" for the second table
    title: str  # the claim in a few words, with the paper's figure or section
    preset: str  # the sweep preset; its kept group is docs/data/PRESET/
    verdict: str  # the page's word (verdicts.RANK), checked against what the data allow
    note: str = ""  # after the verdict: a template of the reading's values ({p0}, {p1}, ...: each part's evidence)
    earlier: str = ""  # pending rerun: the verdict an earlier engine's runs gave (no kept data)
    tail: int = 5  # `grok report --tail` for the claim's tables
    metrics: str = ""  # `grok report --metrics`, comma-separated ("" = the default)
    figure: str = ""  # `grok figure --claim NAME`
    tables: tuple[str, ...] = ()  # the report's tables the page shows, by the start of their titles (() = all)
    sweep_args: str = ""  # what `grok sweep` takes beside the preset (a fork study's --parents)
    ours: bool = False  # our extension: supported / not supported


P = "paper"
CLAIMS: tuple[Claim, ...] = (
    Claim(
        "claim1",
        "1",
        "Embeddings let the MLP generalize; mul after a delay (Fig. 2)",
        "fig2_embeddings",
        "partly",
        "with embeddings both tasks generalize; without, mul fails and add is not learned ({p2}); "
        "mul after add in {delay_k}",
        tail=5,
        metrics="val_acc,train_acc",
        figure="fig2",
    ),
    Claim(
        "claim2",
        "2",
        "Uniform beats random; a skewed split fits, plateaus lower (Fig. 4)",
        "fig4_sampling",
        "not reproduced",
        "the skewed split ends above random at batch 64 ({skew_above_64}) and 128 ({skew_above_128}), and reaches 95% "
        "val sooner at 512 ({skew_sooner_large}); uniform against random unread below 512",
        tail=3,
        metrics="val_acc,train_acc,val_acc_rare",
        figure="fig4_sampling",
        tables=("every cell", "final value"),
    ),
    Claim(
        "claim3",
        "3",
        "Adam-LR groks faster than Adam on all four tasks (Fig. 6)",
        "fig6_optimizers",
        "partly",
        "faster in every seed on {holds_on}; not shown on {not_on}",
        tail=3,
        metrics="val_acc,train_acc",
        figure="fig6",
    ),
    Claim(
        "claim4",
        "4",
        "Small c under-updates, large c unstable, c ≈ 10 balances (Fig. 5)",
        "fig5_c_sensitivity",
        "partly",
        "c = 0.1 moves E less than c = 1 over steps 0–100 ({p0}); no member diverges at c = 32 ({p1}); the "
        "balance unread",
        tail=5,
        figure="fig5",
        tables=("by optim.lr_ratio", "by data.op", "probes"),
    ),
    Claim(
        "claim5",
        "5",
        "λmax(E) ≪ λmax(W) under Adam; Adam-LR brings them closer (Figs. 7, 9)",
        "fig7_hessian",
        "partly",
        "{p0}; {p1}",
        tail=3,
        figure="fig7",
    ),
    Claim(
        "claim6",
        "6",
        "rank(EW) falls; rank(W) three phases; rank(E) stable (Fig. 10)",
        "fig10_rank",
        "partly",
        "rank(EW) falls, {p0}; rank(E) changes by {e_change} over the run (judged: not stable); "
        "rank(W)'s phases judged from the figure",
        tail=3,
        figure="fig10",
    ),
    Claim(
        "claim7",
        "7",
        "Clear Fourier peaks for add and mul, diffuse for div (Fig. 11)",
        "fig11_fourier",
        "partly",
        "add: {p0}; mul: {p1}",
        tail=3,
        figure="fig11",
    ),
    Claim(
        "claim8",
        "8",
        "Frozen embeddings converge slowly, small initial embeddings faster (§4.3)",
        "sec43_init",
        "partly",
        "small init sooner in {small_k}; frozen: {frozen_gen} generalize by step {budget}",
        tail=3,
        metrics="val_acc,train_acc",
        figure="sec43",
    ),
    # the paper's other predictions and our extensions
    Claim(
        "adaptive",
        "",
        "Adaptive Adam-LR, c from eq. 24 (paper, Prop. 4.1)",
        "fig6_adaptive",
        "partly",
        "c once: sooner than Adam in every seed on {once_on}, not on {once_not}; c recomputed: on {every_on}; "
        "no later than c = 10 in {once_c10_k} pairs (once), {every_c10_k} (recomputed)",
        tail=3,
        metrics="val_acc,train_acc",
        figure="fig6_adaptive",
        tables=("every cell", "by arm", "final value"),
    ),
    Claim(
        "appb",
        "",
        "Update ratio ‖ΔE‖/‖ΔW‖ grows with c (paper, App. B, eq. 23)",
        "appb_update_ratio",
        "partly",
        "the ratio grows with c ({p0}), by far less than c ({p1})",
        figure="appb",
    ),
    Claim(
        "wd_init",
        "",
        "Time to converge against weight decay and init scale (paper, §4.1, eqs. 8–9)",
        "wd_init",
        "not reproduced",
        "larger λ sooner and larger α later each hold at some levels of the other factor, not at all (pairs "
        "in the headline)",
        figure="wd_init",
    ),
    Claim(
        "fig12",
        "",
        "Grokking across lr × batch (paper, Figs. 12–13)",
        "fig12_lr_batch",
        "partly",
        "grokking in every member at the two larger batches; the smallest unread ({p0})",
        earlier="reproduced",
        figure="fig12",
    ),
    Claim(
        "app_c4",
        "",
        "Skewed split delays generalization (paper, App. C.4)",
        "fig12_lr_batch_starved",
        "partly",
        "later than the random split, by cell and seed: batch 512 {p1}, 1024 {p2}; batch 256 unread "
        "({starved_gen} starved, {random_gen} random reach 95%)",
        tail=5,
        figure="fig12_starved",
    ),
    Claim(
        "token_skew",
        "",
        "Token-starved split (ours): the lower plateau of Fig. 4",
        "fig4_token_skew",
        "partly",
        "at s = {s}: fits the training set, ends below random ({below_k}), flat by our threshold (judged), rare "
        "tokens' pairs below common ones ({rare_k}); {starved_gen} reach 95% val",
        tail=3,
        metrics="val_acc,train_acc,val_acc_rare,val_acc_common,val_acc_absent",
        figure="fig4",
        tables=("every cell", "final value"),
        ours=True,
    ),
    Claim(
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
    ),
    Claim(
        "decouple",
        "",
        "Decoupling, quick variant (ours): few pairs or few updates?",
        "decouple",
        "partly",
        "both matter: a 10-fold draw cut lowers the targets with 1 or 3 pairs ({draws_few_holds} task × cell "
        "contrasts), not with every pair ({draws_all_holds}); one pair lowers them at matched draws ({pairs_holds})",
        tail=5,
        metrics="val_acc_target,val_acc",
        tables=("final value", "decoupling targets"),
        figure="decouple",
        ours=True,
    ),
    Claim(
        "decouple_paper",
        "",
        "Decoupling at Fig. 4's settings (ours): row norm or data?",
        "decouple_paper",
        "partly",
        "draws cut ({draws_k}) and one pair ({pairs_m1_matched_k}, matched draws) lower the targets; rescaled, they "
        "rise; the norm falls back in 500 steps, matched draws too ({matched_fallback_k})",
        tail=1,
        metrics="val_acc_target,target_norm",
        figure="decouple_paper",
        ours=True,
        tables=("final value", "interventions"),
        sweep_args=" --parents DECOUPLE_CAUSE_GROUP",
    ),
    Claim(
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
    ),
    Claim(
        "decouple_direction",
        "",
        "A starved row's direction (ours, §4.2): does the one pair set it?",
        "decouple_direction",
        "supported",
        "at the ring's radius the target rows recover in their own direction ({rescaled_k} rise) and fall "
        "in a random ({turned_random_k} fall), another token's or their memorized direction",
        tail=1,
        metrics="val_acc_target",
        figure="decouple_direction",
        ours=True,
        tables=("interventions",),
        sweep_args=" --parents DECOUPLE_CAUSE_GROUP",
    ),
    Claim(
        "cure_decouple",
        "",
        "A cure from step 0 (ours, §4.2-4.3): lazy rows on the starved cells",
        "cure_decouple",
        "partly",
        "lazy rows raise the targets where draws are cut ({target_adam_r001_lazy_k}, {target_adam_m1_r1_lazy_k} "
        "seeds), not in every seed at matched draws ({target_adam_m1_matched_lazy_k}); common tokens and control "
        "unharmed",
        tail=5,
        metrics="val_acc_target,val_acc,val_acc_common,target_norm",
        figure="cure_decouple",
        ours=True,
        tables=("cures", "decoupling targets"),
        sweep_args=" --parents DECOUPLE_CAUSE_GROUP",
    ),
    Claim(
        "cure_skew_mul",
        "",
        "Lazy rows on the token-skewed split (ours, §4.1-4.3)",
        "cure_skew_mul",
        "partly",
        "rare tokens' val accuracy {lazy_val_acc_rare} against Adam ({lazy_val_acc_rare_k} seeds higher); "
        "common tokens {lazy_val_acc_common}",
        tail=5,
        metrics="val_acc,val_acc_rare,val_acc_common",
        figure="cure_skew_mul",
        ours=True,
    ),
    Claim(
        "fixes",
        "",
        "The paper's fixes on the token-starved split, mul and add (ours)",
        "skew_fixes_mul",
        "partly",
        "final val accuracy higher in every seed only for {held}; on mul the best fix, {mul_best}, is higher "
        "than Adam in {mul_best_k} seeds",
        figure="fixes_mul",
        ours=True,
        tables=("every cell", "final value"),
    ),
    Claim(
        "progress",
        "",
        "Progress measures and the embedding ring (ours)",
        "progress_phases",
        "supported",
        "restricted loss first ({p0}); ‖θ‖² falls over the jump ({p1}); starved rare tokens last: none joins by "
        "the end ({never_rare})",
        tail=3,
        figure="progress",
        ours=True,
    ),
    Claim(
        "forks",
        "",
        "Forks: starved tokens fed their pairs at the plateau (ours)",
        "fork_feed_starved",
        "supported",
        "fed targets rise ({p0}) and end above the unfed parent ({p1}); rows rescaled first: the same ({p3}), "
        "both at the ceiling",
        tail=5,
        ours=True,
    ),
)


def get(key: str) -> Claim:
    for c in CLAIMS:
        if c.key == key:
            return c
    raise ConfigError(f"unknown claim {key!r}; known: {', '.join(c.key for c in CLAIMS)}")


def data_dir(root: Path, claim: Claim) -> Path:
    return root / "docs" / "data" / claim.preset


def kept(root: Path, claim: Claim) -> Group | None:
    """The claim's kept group, or None (pending rerun)."""
    d = data_dir(root, claim)
    return Group.open(d) if is_group(d) else None


@functools.lru_cache(maxsize=64)
def _read(root: str, key: str) -> Reading | None:
    claim = get(key)
    g = kept(Path(root), claim)
    if g is None or claim.preset not in READERS:
        return None
    r = READERS[claim.preset](g)
    parts = {f"p{i}": p.evidence for i, p in enumerate(r.parts)}  # a note quotes a part's evidence as {p0}, ...
    return replace(r, values={**parts, **r.values})


def reading(root: Path, claim: Claim) -> Reading | None:
    """The claim's reading from its kept data (cached per root), None while it is pending a rerun."""
    return _read(str(root), claim.key)


def strongest(root: Path, claim: Claim) -> str:
    """The strongest verdict the kept data allow; PENDING without kept data."""
    r = reading(root, claim)
    return PENDING if r is None else ceiling(r.parts, claim.ours)


def check(root: Path, claim: Claim) -> str | None:
    """Why the claim's verdict is stronger than its data allow, or None when it is not."""
    top = strongest(root, claim)
    if top == PENDING:
        return None if claim.verdict == PENDING else f"{claim.key}: verdict {claim.verdict!r} without kept data"
    if claim.verdict == PENDING or allowed(claim.verdict, top):
        return None
    return f"{claim.key}: the page says {claim.verdict!r}; the data allow at most {top!r}"


def planned(claim: Claim) -> str:
    """ "seeds × tasks" from the preset, for a claim with no kept data yet."""
    p = load_preset(claim.preset)
    spec = parse_sweep(p.sweep, str(p.path))
    ops = spec.grid.get("data.op") or [p.config.data.op]
    return f"{len(spec.seeds)} × {len(ops)} ({', '.join(map(str, ops))})"
