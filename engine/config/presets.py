"""Presets: TOML files, one experiment each, shipped in the wheel as the `grok_presets` package.

A preset file holds `description`, an optional `extends = "other_preset"`, one table per config
group with only the values that differ, and optionally a `[sweep]` table (read by the sweep
runner). Loading never imports torch.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from engine.config import ConfigError, RunConfig, apply_overrides, group_keys, to_toml, toml_value

_TOP_KEYS = ("description", "extends", "sweep", "wall_time", "preset")  # preset: what `grok presets NAME` prints
PRESET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")  # a file stem in presets/, never a path


@dataclass(frozen=True)
class Preset:
    """A presets/<name>.toml file, loaded: its run config and, for a sweep, its [sweep] table."""

    name: str  # the file's stem
    description: str  # its one-line `description`
    config: RunConfig  # the resolved config (base presets and tables applied)
    path: Path  # the file it came from
    sweep: dict[str, Any] = field(default_factory=dict)  # the [sweep] table, if any
    wall_time: str = ""  # measured wall time at the default budget, shown by `grok presets`

    @property
    def is_sweep(self) -> bool:
        return bool(self.sweep)


@functools.cache
def presets_dir() -> Path:
    """The directory holding the preset TOML files (installed package, or the source tree)."""
    try:
        root = resources.files("grok_presets")
        path = Path(str(root))
        if path.is_dir() and any(path.glob("*.toml")):
            return path
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parent.parent / "presets"


def preset_names() -> list[str]:
    return sorted(p.stem for p in presets_dir().glob("*.toml"))


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file, turning every failure into a one-line ConfigError naming the file."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a TOML file") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: malformed TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from None


def load_file(path: Path, name: str | None = None, _seen: tuple[str, ...] = ()) -> Preset:
    """Load a preset or config TOML file, following `extends` chains."""
    doc = read_toml(path)
    where = str(path)
    base = RunConfig()
    base_sweep: dict[str, Any] = {}
    parent = doc.get("extends")
    if parent is not None:
        if not isinstance(parent, str):
            raise ConfigError(f"{where}: extends must be a preset name")
        if parent in _seen:
            raise ConfigError(f"{where}: extends cycle through {parent!r}")
        p = load_preset(parent, (*_seen, name or path.stem))
        base, base_sweep = p.config, p.sweep
    cfg = apply_overrides(base, group_keys(doc, where, _TOP_KEYS), where)
    desc = doc.get("description", "")
    sweep = doc.get("sweep", base_sweep)
    if not isinstance(sweep, dict):
        raise ConfigError(f"{where}: [sweep] must be a table")
    named = doc.get("preset")
    if named is not None and not (isinstance(named, str) and PRESET_NAME.fullmatch(named)):
        raise ConfigError(f"{where}: preset must be a preset name (letters, digits, _ and -), got {named!r}")
    stem = name or named or path.stem
    cfg = dataclasses.replace(cfg, preset=stem, description=str(desc))
    return Preset(stem, str(desc), cfg, path, dict(sweep), str(doc.get("wall_time", "")))


def load_preset(name: str, _seen: tuple[str, ...] = ()) -> Preset:
    """Load a shipped preset by name; an unknown name suggests the closest ones."""
    if not PRESET_NAME.fullmatch(name):
        raise ConfigError(f"--preset takes a preset name, not a path ({name!r}); give a TOML file with --config")
    path = presets_dir() / f"{name}.toml"
    if not path.is_file():
        close = difflib.get_close_matches(name, preset_names(), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `grok presets` lists them"
        raise ConfigError(f"unknown preset {name!r}{hint}")
    return load_file(path, name, _seen)


def all_presets() -> list[Preset]:
    return [load_preset(n) for n in preset_names()]


NO_SOURCE = "give --preset NAME or --config FILE.toml (`grok presets` lists the presets)"


def preset_toml(p: Preset) -> str:
    """What `grok presets NAME` prints: the resolved config and its [sweep] table, loadable by --config."""
    text = to_toml(p.config)
    if p.sweep:
        text += "\n[sweep]\n" + "".join(f"{toml_value(k)} = {toml_value(v)}\n" for k, v in p.sweep.items())
    return text
