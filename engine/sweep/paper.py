"""The paper's reproduction as one list of sweeps: what `grok sweep --preset paper` runs, and its budget.

One sweep preset per claim of *Mechanistic Insights into Grokking from the Embedding Layer*, in the
order docs/REPRODUCTION.md gives them; claim 2 (Fig. 4) has several: the splits, the readings of
"skewed", equal-epoch budgets, the starved limit and the fixes on the skewed split. `plan()` sizes
each from the presets themselves (members, summed step budget) and reads the wall time each preset
records from its last measured run, so a user can plan before starting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PAPER = "paper"  # the name `grok sweep --preset` takes for the whole list
PAPER_SWEEPS: tuple[tuple[str, str], ...] = (
    ("fig2_embeddings", "1: embeddings let the MLP generalize, mul after a delay (Fig. 2)"),
    ("fig2_long", "1: the same at 40,000 steps, train accuracy shown (Fig. 2)"),
    ("fig4_sampling", "2: uniform beats random, skewed plateaus lower (Fig. 4)"),
    ("fig4_skew_heldout", "2: the held-out set skewed the other way (Fig. 4)"),
    ("fig4_token_skew", "2: token-level skew and rare-token accuracy (Fig. 4)"),
    ("fig4_epochs", "2: Fig. 4's batch rows at equal epochs (Fig. 4)"),
    ("starve", "2: the starved limit, tokens with m = 0..5 training pairs (Fig. 4, §4.2)"),
    ("skew_fixes_mul", "2, 3: Adam-LR and the samplers on the token-skewed split (§4.2-4.3, App. A)"),
    ("skew_fixes_add", "2, 3: the same fixes on add (§4.2-4.3, App. A)"),
    ("fig6_optimizers", "3: Adam-LR groks faster than Adam on all four tasks (Fig. 6)"),
    ("fig6_adaptive", "3: adaptive Adam-LR (c once, c recomputed) against Adam and c = 10 (Fig. 6, Prop. 4.1)"),
    ("appb_update_ratio", "3: the update ratio ‖ΔE‖/‖ΔW‖ grows with c (App. B, eq. 23)"),
    ("fig5_c_sensitivity", "4: small c under-updates, large c unstable (Fig. 5)"),
    ("fig7_hessian", "5: λmax(E) ≪ λmax(W) under Adam (Figs. 7, 9)"),
    ("fig10_rank", "6: rank(EW) falls, rank(W) in three phases (Fig. 10)"),
    ("fig11_fourier", "7: Fourier peaks for add and mul (Fig. 11)"),
    ("sec43_init", "8: frozen embeddings slow, small init fast (§4.3)"),
    ("wd_init", "8: time to generalize against weight decay and init scale (§4.1, eqs. 8-9)"),
    ("fig12_lr_batch", "(Figs. 12-13) grokking persists across lr × batch"),
    ("fig12_lr_batch_starved", "(Figs. 12-13) the token-skewed split delays generalization at every lr × batch"),
)


DURATION = re.compile(r"(?:\b(\d+(?:\.\d+)?)\s*h\b\s*)?(?:\b(\d+(?:\.\d+)?)\s*min\b\s*)?(?:\b(\d+(?:\.\d+)?)\s*s\b)?")


@dataclass(frozen=True)
class PlannedSweep:
    """One sweep of the plan: its size from the preset and the wall time the preset records."""

    preset: str
    claim: str
    members: int
    steps: int  # summed max_steps over members: the budget; early stops make the real count lower
    wall_time: str  # as written in the preset ("5 min on 2 CPU cores (2 workers)")

    @property
    def minutes(self) -> float | None:
        """The first duration of `wall_time` in minutes ("1 h 42 min", "39 min", "2 min 50 s", "35 s"), or None
        when it gives none."""
        for m in DURATION.finditer(self.wall_time):
            h, mins, secs = (float(x) if x else 0.0 for x in m.groups())
            if any(m.groups()):
                return h * 60 + mins + secs / 60
        return None


def plan(names: tuple[str, ...] | None = None) -> list[PlannedSweep]:
    """Size every sweep of the list (or of `names`); ConfigError for a preset that is not a sweep."""
    from engine.config import ConfigError
    from engine.config.presets import load_preset
    from engine.sweep.spec import expand, parse_sweep

    claims = dict(PAPER_SWEEPS)
    out = []
    for name in names or tuple(claims):
        p = load_preset(name)
        if not p.is_sweep:
            raise ConfigError(f"preset {name!r} has no [sweep] table")
        spec = parse_sweep(p.sweep, str(p.path))
        members = expand(p.config, spec, str(p.path))
        # a fork member trains from its fork step on: known where fork_at is a step, else its whole budget
        start = int(spec.fork_at) if spec.fork_at.isdigit() else 0
        steps = sum(cfg.train.max_steps - (start if m.fork_of else 0) for m, cfg in members)
        out.append(PlannedSweep(name, claims.get(name, ""), len(members), steps, p.wall_time))
    return out
