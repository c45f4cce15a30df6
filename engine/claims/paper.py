"""The paper's reproduction as one list of sweeps: what `grok sweep --preset paper` runs, and its budget.

One sweep preset per claim of *Mechanistic Insights into Grokking from the Embedding Layer*, in the
order docs/REPRODUCTION.md gives them; claim 2 (Fig. 4) has several: the splits, the readings of
"skewed", equal-epoch budgets, the starved limit and the fixes on the skewed split. The list is read
from the studies (engine/claims/registry.py `paper_sweeps`): each study in the run names its paper claim.
`plan()` sizes each from the presets themselves (members, summed step budget) and reads the wall time each
preset records from its last measured run, so a user can plan before starting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.claims.registry import paper_sweeps

PAPER = "paper"  # the name `grok sweep --preset` takes for the whole list
PAPER_SWEEPS: tuple[tuple[str, str], ...] = paper_sweeps()  # (preset, plan line), from the studies


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
