"""`grok figure RUN|GROUP...`: the runs given share one panel (M/G markers when there is one run);
each group gets one panel per metric, its cells as mean lines over a band: the seeds' range below 8, the
95% t-interval of the mean from 8 (`grok report`'s rule)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from engine.config import ConfigError
from engine.records.group import read_group
from engine.records.stats import MIN_SEEDS_FOR_INTERVAL
from engine.rundir import clean_text, is_group, is_run_dir, short_name
from grok_tui.figures.data import group_curves, run_curves
from grok_tui.figures.draw import Panel

SPREAD_RULE = f"their range below {MIN_SEEDS_FOR_INTERVAL} seeds, a 95% t-interval from {MIN_SEEDS_FOR_INTERVAL}"


def run_panel(paths: list[Path], metrics: list[str], x: str) -> Panel:
    loaded = [run_curves(p, metrics, x) for p in paths]
    many = len(loaded) > 1
    curves = [dataclasses.replace(c, label=f"{name} {c.label}") if many else c for name, cs, _ in loaded for c in cs]
    title = loaded[0][0] if not many else f"{len(loaded)} runs"
    # one run's phases (several runs' would be ambiguous); a parent's and its forks' F and I are shared
    markers = loaded[0][2] if not many else sorted({m for _, _, ms in loaded for m in ms if m[1] in ("F", "I")})
    return Panel(title, metrics, curves, markers, xlabel=x)


def group_panels(path: Path, metrics: list[str], x: str) -> list[Panel]:
    group = read_group(path)
    panels = []
    name = short_name(clean_text(path.name))
    for m in metrics:
        curves = group_curves(group, m, x)
        if curves:
            # below 8 members in every cell the band is the range at every step; otherwise a step with fewer
            # values (a member stopped or still running) draws the range too: the title gives the rule
            band = "their range" if all(c.n < MIN_SEEDS_FOR_INTERVAL for c in curves) else SPREAD_RULE
            panels.append(Panel(f"{name}: mean over seeds, {band}", [m], curves, xlabel=x))
    if not panels:
        raise ConfigError(f"{path}: no member has logged {', '.join(metrics)} yet")
    return panels


def panels_for(paths: list[str], metrics: list[str], x: str = "step") -> list[Panel]:
    """The runs' shared panel first, then each group's panels, in the order given."""
    runs = [Path(p) for p in paths if is_run_dir(p)]
    out: list[Panel] = []
    for p in map(Path, paths):
        if is_group(p):
            out += group_panels(p, metrics, x)
        elif not is_run_dir(p):
            raise ConfigError(f"{p}: not a run directory (no config.json) nor a sweep group (no group.json)")
    if runs:
        out.insert(0, run_panel(runs, metrics, x))
    return out
