"""The paper's reproduction as one list of sweeps: what `grok sweep --preset paper` runs, and its budget.

One sweep preset per claim of *Mechanistic Insights into Grokking from the Embedding Layer*, in the
order docs/REPRODUCTION.md gives them; claim 2 (Fig. 4) has several: the splits, the readings of
"skewed", equal-epoch budgets, the starved limit and the fixes on the skewed split. The list is read
from the studies (engine/claims/registry.py `paper_sweeps`): each study in the run names its paper claim.
`plan()` sizes each from the presets themselves (members, summed step budget) and reads the wall time each
preset records from its last measured run, so a user can plan before starting.
"""

from __future__ import annotations

import math
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

    @property
    def rounding(self) -> float | None:
        """The step, in minutes, that the first duration of `wall_time` is rounded to: 1/60 where it gives
        seconds, 0.1 for "11.8 min", 1 for "39 min" or "2 h 10 min", 60 for "2 h"; None when it gives none."""
        for m in DURATION.finditer(self.wall_time):
            if not any(m.groups()):
                continue
            unit, text = next((u, x) for u, x in zip((1 / 60, 1.0, 60.0), reversed(m.groups()), strict=True) if x)
            return unit * 10.0 ** -len(text.partition(".")[2])
        return None

    @property
    def in_hours(self) -> bool:
        """The first duration of `wall_time` counts hours ("2 h 10 min")."""
        return next((m.group(1) is not None for m in DURATION.finditer(self.wall_time) if any(m.groups())), False)


def duration_text(minutes: float, rounding: float, hours: bool = False) -> str:
    """A duration rounded to `rounding` minutes and written as the presets write theirs: "35 s", "2 min 50 s",
    "11.8 min", "89 min", or with `hours` (a row wrote its time in hours) "2 h 10 min"."""
    if rounding < 1 / 60 + 1e-9:  # seconds
        s = round(minutes * 60)
        return f"{s} s" if s < 60 else f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    if rounding < 1:  # tenths (or hundredths) of a minute
        return f"{minutes:.{round(-math.log10(rounding))}f} min"
    m = round(minutes / rounding) * rounding
    if m < 60 or not hours:
        return f"{m:.0f} min"
    return f"{m // 60:.0f} h {m % 60:.0f} min" if m % 60 else f"{m // 60:.0f} h"


def plan(names: tuple[str, ...] | None = None) -> list[PlannedSweep]:
    """Size every sweep of the list (or of `names`); ConfigError for a preset that is not a sweep."""
    from engine.config import ConfigError
    from engine.config.presets import load_preset
    from engine.sweep.spec import expand, parse_sweep, trained_steps

    claims = dict(PAPER_SWEEPS)
    out = []
    for name in names or tuple(claims):
        p = load_preset(name)
        if not p.is_sweep:
            raise ConfigError(f"preset {name!r} has no [sweep] table")
        spec = parse_sweep(p.sweep, str(p.path))
        members = expand(p.config, spec, str(p.path))
        steps = sum(trained_steps(spec, m, cfg) for m, cfg in members)
        out.append(PlannedSweep(name, claims.get(name, ""), len(members), steps, p.wall_time))
    return out
