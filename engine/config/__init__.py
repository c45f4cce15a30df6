"""Run configuration: nested frozen dataclasses checked on construction (fields.py), dotted overrides and
TOML (overrides.py), presets, parameter sets and the generated reference (doc.py).

This package imports neither torch nor any UI library, so `grok presets` and `grok --help` stay fast.
"""

from __future__ import annotations

from engine.config.fields import (
    GROUPS,
    LAYERNORMS,
    ConfigError,
    DataConfig,
    ModelConfig,
    OptimConfig,
    ProbeConfig,
    RunConfig,
    TrainConfig,
)
from engine.config.overrides import all_keys, apply_overrides, from_dict, group_keys, parse_set, to_toml, toml_value

__all__ = [
    "GROUPS",
    "LAYERNORMS",
    "ConfigError",
    "DataConfig",
    "ModelConfig",
    "OptimConfig",
    "ProbeConfig",
    "RunConfig",
    "TrainConfig",
    "all_keys",
    "apply_overrides",
    "from_dict",
    "group_keys",
    "parse_set",
    "to_toml",
    "toml_value",
]
