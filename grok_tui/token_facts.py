"""Each operand token of a run: its role in the split, the training pairs holding it, its share of the
sampler's draws, its learned step and its final val_acc; and Spearman's rank correlation of learned step
with training pairs, pooled as `grok tokens` and the token figure show it (§4.2: a token in few training
pairs gets few embedding updates and is learned late; the per-token form of Fig. 4)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from engine.events import TokenSets
from engine.records.run import read_run
from engine.records.stats import midranks


def role(tokens: TokenSets, t: int) -> str:
    """`absent` (no training pair), `rare` (the rarest probe.rare_k), `target` (data.starve_k's), combined
    as `rare+target`; empty for a common token."""
    base = "absent" if t in tokens.absent else "rare" if t in tokens.rare else ""
    if t in tokens.target:
        return f"{base}+target" if base else "target"
    return base


def spearman(x: Any, y: Any) -> float:
    """Spearman's rank correlation (average ranks for ties); NaN when either side is constant or has < 3 points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 3:
        return math.nan
    rx, ry = midranks(x), midranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def token_table(run_dir: str | Path) -> tuple[list[dict[str, Any]], float, dict[str, Any]]:
    """One row per operand token (token, train_pairs, draw_share, learned_step, final_val_acc, role), sorted
    by training pairs; the learned-step threshold; and the run's facts (p, op, seed, n_eval_last, and
    `spearman` over the learned tokens when at least 3 were learned). ConfigError for an unreadable run."""
    rec = read_run(run_dir)
    cfg, tokens, share = rec.config, rec.tokens, rec.summary.draw_share
    p = cfg.data.p
    learned, threshold = rec.learned_steps
    share = share if share is not None and len(share) == p else None
    logged = rec.tokens_logged
    final = logged[-1].val_acc if logged and logged[-1].val_acc is not None else ()
    rows = [
        {
            "token": t,
            "train_pairs": tokens.train_pairs[t],
            "draw_share": float(share[t]) if share is not None else math.nan,
            "learned_step": learned[t] if t < len(learned) else None,
            "final_val_acc": final[t] if t < len(final) else math.nan,
            "role": role(tokens, t),
        }
        for t in range(p)
    ]
    rows.sort(key=lambda r: (r["train_pairs"], r["token"]))
    facts: dict[str, Any] = {"p": p, "op": cfg.data.op, "seed": cfg.train.seed, "n_eval_last": rec.step}
    learned_rows = [r for r in rows if r["learned_step"] is not None]
    if len(learned_rows) >= 3:
        pairs, steps = [r["train_pairs"] for r in learned_rows], [r["learned_step"] for r in learned_rows]
        facts["spearman"] = spearman(pairs, steps)
    return rows, threshold, facts
