"""The one resolver: what a command line, a screen or a script asks for, made a RunConfig.

A source (a preset, a TOML file, or a config already in hand: a fork's parent, a resumed run's own, the
TUI's current run), then the `--set` overrides, then the `--seed`, `--steps` and `--device` shorthands,
which win over a `--set` of the same key. `grok run`, `split`, `sweep`, `fork`, `--resume`, the TUI's
start, restart and picker, `grok bench` and bench/screenshots.py all come through `resolve`; which
source a command line names (`source`) and what `--resume` refuses beside it (`check_resume`) are
decided here too. Torch-free, like the rest of engine/config/.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.config.fields import ConfigError, RunConfig
from engine.config.overrides import apply_overrides, parse_set
from engine.config.presets import NO_SOURCE, Preset, load_file, load_preset

SHORTHANDS = (("seed", "train.seed"), ("steps", "train.max_steps"), ("device", "train.device"))
Sets = Mapping[str, Any] | Sequence[str] | None  # {"optim.lr": "3e-3"}, or --set's "optim.lr=3e-3" strings


def source(preset: str | None, config: str | Path | None, missing: str = NO_SOURCE) -> Preset:
    """The preset or the TOML file a command line names: exactly one of them (`missing` says what to give)."""
    if preset and config:
        raise ConfigError("give either --preset or --config, not both")
    if preset:
        return load_preset(preset)
    if config:
        return load_file(Path(config))
    raise ConfigError(missing)


def overrides(
    sets: Sets = None, *, seed: int | None = None, steps: int | None = None, device: str | None = None
) -> dict[str, Any]:
    """--set's dotted keys (parsed when given as `key=value` strings) with the shorthands folded in; a
    shorthand wins over a --set of its key."""
    out: dict[str, Any] = dict(sets) if isinstance(sets, Mapping) else parse_set(list(sets or []))
    given: dict[str, Any] = {"seed": seed, "steps": steps, "device": device}
    for name, key in SHORTHANDS:
        if given[name] is not None:
            out[key] = given[name]
    return out


def resolve(
    base: Preset | RunConfig,
    sets: Sets = None,
    *,
    seed: int | None = None,
    steps: int | None = None,
    device: str | None = None,
    where: str = "",
) -> RunConfig:
    """`base`'s config with `sets` and the shorthands applied and checked (engine/config/overrides.py);
    ConfigError, one line (prefixed with `where` for a bad value), for anything the config refuses."""
    cfg = base if isinstance(base, RunConfig) else base.config
    return apply_overrides(cfg, overrides(sets, seed=seed, steps=steps, device=device), where)


def check_resume(given: Sequence[str]) -> None:
    """--resume continues a run with its own config: the flags in `given` (--preset, --config, --set, --seed)
    beside it are an error; --steps and --device may extend or move it."""
    refused = [f for f in given if f in ("--preset", "--config", "--set", "--seed")]
    if refused:
        raise ConfigError("--resume continues a run with its own config; drop --preset/--config/--set/--seed")
