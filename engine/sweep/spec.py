"""Sweeps: a preset's [sweep] table expanded into members (arms × grid × seeds), kept in a group directory.

`parse_sweep` checks the table's shape and `expand` checks every member's config before anything
runs. The group directory (engine/records/group_dir.py) holds `group.json` (the base config, the grid
and the members, each with its run directory's name), `results.csv` (one row per member that ended)
and one normal run directory per member. Running the members is `engine.sweep.pool.Sweep`'s job; this
module is torch-free so `grok report` stays fast.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from engine.config import ConfigError, RunConfig, apply_overrides
from engine.records.group_dir import Member, SweepSpec, fork_settings, fork_window

__all__ = ["check_sets", "expand", "parse_sweep"]

SWEEP_KEYS = ("seeds", "compare", "tune", "grid", "arms", "fork_at", "forks")
FORK_PHASES = ("memorized", "generalized")  # fork_at: a phase the run logs (its kept checkpoint), or a step


def _seeds(value: Any, where: str) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ConfigError(f"{where}: sweep.seeds must be >= 1 (got {value})")
        return tuple(range(value))
    if isinstance(value, list) and value and all(isinstance(s, int) and not isinstance(s, bool) for s in value):
        if len(set(value)) != len(value):
            raise ConfigError(f"{where}: sweep.seeds has repeated seeds {value}")
        return tuple(value)
    raise ConfigError(f"{where}: sweep.seeds must be an int N or a list of ints (got {value!r})")


def parse_sweep(table: dict[str, Any], where: str = "sweep") -> SweepSpec:
    """Check a [sweep] table's shape; values are checked later against the config by `expand`."""
    for k in table:
        if k not in SWEEP_KEYS:
            raise ConfigError(f"{where}: unknown [sweep] key {k!r} (expected {', '.join(SWEEP_KEYS)})")
    grid = table.get("grid", {})
    if not isinstance(grid, dict):
        raise ConfigError(f"{where}: [sweep.grid] must be a table")
    for k, v in grid.items():
        if not isinstance(v, list) or not v:
            raise ConfigError(f"{where}: sweep.grid {k!r} must be a non-empty list (got {v!r})")
    arms = table.get("arms", {})
    if not isinstance(arms, dict) or not all(isinstance(a, dict) for a in arms.values()):
        raise ConfigError(f"{where}: [sweep.arms] must hold one table per arm")
    compare = table.get("compare", "")
    if compare and compare not in arms:
        raise ConfigError(f"{where}: sweep.compare {compare!r} is not an arm (arms: {', '.join(arms) or 'none'})")
    tune = table.get("tune", [])
    if isinstance(tune, str):
        tune = [tune]
    if not isinstance(tune, list) or any(t not in grid for t in tune):
        raise ConfigError(f"{where}: sweep.tune must list grid keys (got {tune!r})")
    overlap = [k for a in arms.values() for k in a if k in grid]
    if overlap:
        raise ConfigError(f"{where}: {overlap[0]!r} is set both by an arm and by the grid")
    seeds = _seeds(table.get("seeds", 1), where)
    fork_at, forks = _forks(table, arms, where)
    arms_ = {k: dict(v) for k, v in arms.items()}
    return SweepSpec(seeds, str(compare), tuple(tune), dict(grid), arms_, fork_at, forks)


def _forks(table: dict[str, Any], arms: dict[str, Any], where: str) -> tuple[str, dict[str, dict[str, Any]]]:
    """[sweep] fork_at and [sweep.forks.NAME] tables, checked: a phase or step, and each fork's `from` arm."""
    forks = table.get("forks", {})
    at = table.get("fork_at", "")
    if not isinstance(forks, dict) or not all(isinstance(f, dict) for f in forks.values()):
        raise ConfigError(f"{where}: [sweep.forks] must hold one table per fork arm")
    if bool(forks) != (at != ""):
        raise ConfigError(f"{where}: sweep.fork_at and [sweep.forks.NAME] go together")
    if isinstance(at, int) and not isinstance(at, bool):
        at = str(at)
    if forks and not (at in FORK_PHASES or (isinstance(at, str) and at.isdigit())):
        raise ConfigError(f"{where}: sweep.fork_at must be memorized, generalized or a step (got {at!r})")
    for name, f in forks.items():
        if name in arms:
            raise ConfigError(f"{where}: fork arm {name!r} has the name of an arm")
        src = f.get("from", "")
        if src not in arms and not (src == "" and not arms) and not (src == "*" and arms):
            raise ConfigError(f'{where}: sweep.forks.{name}.from must name an arm or be "*" (got {src!r})')
        if src == "*" and any(f"{a}_{name}" in arms or f"{a}_{name}" in forks for a in arms):
            raise ConfigError(f'{where}: fork arm {name!r} from "*" makes a name an arm already has')
        iv = f.get("intervene", [])
        if not isinstance(iv, list) or not all(isinstance(x, str) for x in iv):
            raise ConfigError(f"{where}: sweep.forks.{name}.intervene must be a list of strings")
        w = f.get("window", 0)
        if isinstance(w, bool) or not isinstance(w, int) or w < 0:
            raise ConfigError(f"{where}: sweep.forks.{name}.window must be a whole number of steps (got {w!r})")
        if w and "train.max_steps" in f:
            raise ConfigError(f"{where}: sweep.forks.{name} sets window and train.max_steps: give one")
    return str(at), {k: dict(v) for k, v in forks.items()}


def expand(base: RunConfig, spec: SweepSpec, where: str = "sweep") -> list[tuple[Member, RunConfig]]:
    """Members = arms × grid × seeds, each checked with apply_overrides before anything runs."""
    from engine.train.logged import check_columns  # torch only for a column a probe logs

    arms = spec.arms or {"": {}}
    keys = list(spec.grid)
    out: list[tuple[Member, RunConfig]] = []
    checked: set[str] = set()
    for arm, arm_over in arms.items():
        for point in itertools.product(*(spec.grid[k] for k in keys)):
            values = dict(zip(keys, point, strict=True))
            for seed in spec.seeds:
                over = {**arm_over, **values, "train.seed": seed}
                label = f"arm {arm!r}" if arm else "grid"
                cfg = apply_overrides(base, over, f"{where} ({label})")
                if (key := repr(dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, seed=0)))) not in checked:
                    check_columns(cfg)  # every member's stop_metric a column it logs (seeds log the same ones)
                    checked.add(key)
                m = Member(f"m{len(out):03d}", arm, values, seed, over)
                out.append((m, cfg))
    return out + _fork_members(base, spec, [m for m, _ in out], where)


def _fork_members(
    base: RunConfig, spec: SweepSpec, parents: list[Member], where: str
) -> list[tuple[Member, RunConfig]]:
    """One member per fork arm and member of its `from` arm, each checked as a fork is (engine/train/fork.py)."""
    if not spec.forks:
        return []
    from engine.config.param_sets import parse_intervention  # torch-free: the parse without the interventions
    from engine.train.fork import refuse_unforkable

    out: list[tuple[Member, RunConfig]] = []
    n = len(parents)
    for name, f in spec.forks.items():
        settings = fork_settings(f)
        refuse_unforkable(list(settings))
        ivs = tuple(f.get("intervene", []))
        for spec_ in ivs:
            parse_intervention(spec_)
        src = f.get("from", "")
        for p in parents:
            if src not in ("", "*", p.arm):
                continue
            over = {**p.overrides, **settings}
            cfg = apply_overrides(base, over, f"{where} (fork {name!r})")
            arm = f"{p.arm}_{name}" if src == "*" else name
            out.append((Member(f"m{n + len(out):03d}", arm, p.values, p.seed, over, p.id, ivs), cfg))
    return out


def trained_steps(spec: SweepSpec, m: Member, cfg: RunConfig) -> int:
    """The steps a member trains: its max_steps; a fork's from its fork step on, its `window` where its arm has
    one, else max_steps less fork_at where that is a step (at a phase, the whole budget: the step is not known
    before the parent runs)."""
    if not m.fork_of:
        return cfg.train.max_steps
    if window := fork_window(spec.fork_table(m.arm)):
        return window
    return max(cfg.train.max_steps - (int(spec.fork_at) if spec.fork_at.isdigit() else 0), 1)


def check_sets(spec: SweepSpec, sets: dict[str, Any]) -> None:
    """--set may not change a key the sweep varies (that would collapse the grid)."""
    for k in sets:
        if k in spec.swept or k == "train.seed":
            raise ConfigError(f"--set {k}: this key is swept by the preset; use --seeds or edit the grid")
