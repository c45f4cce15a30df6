"""Dotted overrides (`--set optim.lr=3e-3`), parsed against each field's type, and the TOML a config is written as.

Torch-free, like engine/config/fields.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import json
import math
import types
import typing
from collections.abc import Callable, Container
from typing import Any

from engine.config.fields import GROUPS, ConfigError, RunConfig


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def coerce(value: Any, typ: Any, name: str) -> Any:
    """Convert a TOML value or a --set string to the field's declared type, or raise ConfigError."""
    origin = typing.get_origin(typ)
    if origin is tuple:
        return _as_tuple(value, typ, name)
    if origin in (typing.Union, types.UnionType):
        raise ConfigError(f"{name}: unsupported type")
    if typ in _SCALARS:
        return _SCALARS[typ](value, name)
    raise ConfigError(f"{name}: unsupported type {typ}")


def _as_tuple(value: Any, typ: Any, name: str) -> tuple[Any, ...]:
    if isinstance(value, str):
        value = [v for v in value.strip("()[] ").split(",") if v.strip()]
    if not isinstance(value, list | tuple):
        raise ConfigError(f"{name}: expected a list of numbers (got {value!r})")
    args = typing.get_args(typ)
    if len(value) != len(args):
        raise ConfigError(f"{name}: expected {len(args)} values (got {len(value)})")
    return tuple(coerce(v, a, name) for a, v in zip(args, value, strict=True))


def _as_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on"):
        return True
    if isinstance(value, str) and value.lower() in ("false", "0", "no", "off"):
        return False
    raise ConfigError(f"{name}: expected true or false (got {value!r})")


def _as_int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{name}: expected an integer (got {value!r})")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip().replace("_", ""))  # exact: 9007199254740993 stays itself
        except ValueError:
            with contextlib.suppress(ValueError):
                value = float(value)  # "1e3"
    # A float names an integer only where a double holds every integer exactly (|x| <= 2^53).
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    raise ConfigError(f"{name}: expected an integer (got {value!r})")


def _as_float(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(f"{name}: expected a number (got {value!r})")
    try:
        out = float(value)
    except OverflowError:  # an int past the double range; a string overflows to inf instead
        raise ConfigError(f"{name}: out of range (got {value!r})") from None
    except ValueError:
        raise ConfigError(f"{name}: expected a number (got {value!r})") from None
    if not math.isfinite(out):
        raise ConfigError(f"{name}: expected a finite number (got {value!r})")
    return out


def _as_str(value: Any, name: str) -> str:
    if isinstance(value, str):
        return value
    raise ConfigError(f"{name}: expected a string (got {value!r})")


_SCALARS: dict[type, Callable[[Any, str], Any]] = {bool: _as_bool, int: _as_int, float: _as_float, str: _as_str}


def all_keys() -> list[str]:
    return [f"{g}.{f.name}" for g, cls in GROUPS.items() for f in dataclasses.fields(cls)]


def _unknown_key(key: str, where: str = "") -> ConfigError:
    close = difflib.get_close_matches(key, all_keys(), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    prefix = f"{where}: " if where else ""
    return ConfigError(f"{prefix}unknown config key {key!r}{hint}")


def apply_overrides(cfg: RunConfig, overrides: dict[str, Any], where: str = "") -> RunConfig:
    """Apply {"group.key": value} with type checks; values may be strings (from --set) or TOML values."""
    groups: dict[str, dict[str, Any]] = {}
    try:
        overrides = dict(overrides)
        if "data.op_token" in overrides:  # data.format's old spelling, resolved here: no field holds it
            op_token = coerce(overrides.pop("data.op_token"), bool, "data.op_token")
            if not op_token and overrides.get("data.format", cfg.data.format) == "a_op_b_eq":
                overrides["data.format"] = "a_b_eq"  # false = [a, b, =]; true changes nothing
        for key, raw in overrides.items():
            group, _, name = key.partition(".")
            if group not in GROUPS or not name:
                raise _unknown_key(key)
            types_ = _field_types(GROUPS[group])
            if name not in types_:
                raise _unknown_key(key)
            groups.setdefault(group, {})[name] = coerce(raw, types_[name], key)
        changes = {g: dataclasses.replace(getattr(cfg, g), **kv) for g, kv in groups.items()}
        return dataclasses.replace(cfg, **changes)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}" if where else str(e)) from None


def parse_set(items: list[str]) -> dict[str, str]:
    """Parse repeated `--set group.key=value` strings."""
    out: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"--set {item!r}: expected group.key=value")
        out[key.strip()] = value.strip()
    return out


def group_keys(doc: dict[str, Any], where: str, other: Container[str]) -> dict[str, Any]:
    """A document's config tables as dotted keys; a key neither a group nor in `other` is an error."""
    flat: dict[str, Any] = {}
    for k, v in doc.items():
        if k in other:
            continue
        if k not in GROUPS:
            raise _unknown_key(k, where)
        if not isinstance(v, dict):
            raise ConfigError(f"{where}: [{k}] must be a table")
        flat.update({f"{k}.{kk}": vv for kk, vv in v.items()})
    return flat


def from_dict(d: dict[str, Any], where: str = "") -> RunConfig:
    """Build a RunConfig from a nested dict such as config.json or a TOML file's tables."""
    top: dict[str, Any] = {k: str(d[k]) for k in ("preset", "description") if k in d}
    meta = [k for k in d if k.startswith("_")]  # metadata such as config.json's _meta
    cfg = apply_overrides(RunConfig(), group_keys(d, where, [*top, *meta]), where)
    return dataclasses.replace(cfg, **top) if top else cfg


def toml_value(v: Any) -> str:
    """A TOML value: strings as basic strings (the same escapes as JSON), arrays, inline tables with quoted
    keys (`{"optim.lr" = 1e-3}`), booleans and numbers. The one TOML writer (`to_toml`, engine/config/presets.py)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, tuple | list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return repr(v)


def to_toml(cfg: RunConfig) -> str:
    """Render a config as TOML (every field, resolved)."""
    lines = [f"{k} = {toml_value(v)}" for k, v in (("preset", cfg.preset), ("description", cfg.description)) if v]
    for g in GROUPS:
        sub = getattr(cfg, g)
        lines += [f"\n[{g}]", *(f"{f.name} = {toml_value(getattr(sub, f.name))}" for f in dataclasses.fields(sub))]
    return "\n".join(lines).lstrip() + "\n"
