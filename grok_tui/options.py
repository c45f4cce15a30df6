"""What to train, as the command line names it: the options `grok run`, `grok tui` / `grok-tui`, `grok sweep`
and `grok split` share, and the one place they become a config."""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from engine.config import RunConfig
    from engine.config.presets import Preset as PresetFile

Preset = Annotated[str | None, typer.Option("--preset", "-p", help="Preset name (`grok presets` lists them).")]
ConfigFile = Annotated[str | None, typer.Option("--config", "-c", help="A TOML config file.")]
Set = Annotated[
    list[str] | None,
    typer.Option("--set", "-s", help="Override a config key, e.g. --set optim.lr=3e-3 (repeatable)."),
]
Seed = Annotated[int | None, typer.Option("--seed", help="Shorthand for --set train.seed=N.")]
Steps = Annotated[int | None, typer.Option("--steps", help="Shorthand for --set train.max_steps=N.")]
DEVICES = "auto, cpu, cuda, cuda:N or mps."
Device = Annotated[str | None, typer.Option("--device", help=DEVICES)]
DeviceName = Annotated[str, typer.Option("--device", help=DEVICES)]  # a device to use now (bench, doctor)
Out = Annotated[str, typer.Option("--out", help="Root directory for run directories.")]
# `-o` meant the run root here and the output file in `grok export`; it is now the file everywhere.
OutShort = Annotated[str | None, typer.Option("-o", hidden=True, help="Old spelling of --out (deprecated).")]
Output = Annotated[str, typer.Option("--output", "-o", help="Output file, or - for stdout.")]


# RunOptions' fields as the command line spells them
FLAGS = {name: f"--{name}" for name in ("preset", "config", "seed", "steps", "device")} | {"sets": "--set"}


@dataclass(frozen=True)
class RunOptions:
    """What to train, as a command line gives it: a preset or config file, overrides, shorthands, the run root."""

    preset: Preset = None
    config: ConfigFile = None
    sets: Set = None
    seed: Seed = None
    steps: Steps = None
    device: Device = None
    out: Out = "runs"
    out_short: OutShort = None

    @property
    def out_root(self) -> str:
        return out_dir(self.out, self.out_short)

    def overrides(self) -> dict[str, Any]:
        """--set's dotted keys, checked, with the --seed, --steps and --device shorthands folded in
        (engine/config/resolve.py)."""
        from engine.config.resolve import overrides

        return overrides(self.sets or [], seed=self.seed, steps=self.steps, device=self.device)

    def source(self, missing: str | None = None) -> PresetFile:
        """The preset or config file named: exactly one (`missing`: the error when neither is given)."""
        from engine.config.presets import NO_SOURCE
        from engine.config.resolve import source

        return source(self.preset, self.config, missing or NO_SOURCE)

    def resolve(self) -> RunConfig:
        """The config these options ask for: the preset or file, then --set, then the shorthands
        (engine/config/resolve.py)."""
        from engine.config.resolve import resolve

        over = self.overrides()  # a bad --set is reported before a bad preset, as it always was
        return resolve(self.source(), over)

    def given(self, *names: str) -> list[str]:
        """The flags among `names` (RunOptions' fields) this command line gave."""
        return [FLAGS[n] for n in names if getattr(self, n) not in (None, [], "")]

    def check_resume(self) -> None:
        """--resume takes the run's own config: a preset, config file, --set or --seed beside it is an error."""
        from engine.config.resolve import check_resume

        check_resume(self.given("preset", "config", "sets", "seed"))


def with_run_options(
    command: Callable[..., Any] | None = None, *, fields: tuple[str, ...] | None = None
) -> Callable[..., Any]:
    """`command(opts: RunOptions, ...)` as a typer command whose first options are RunOptions' fields (or
    only `fields`, the others left at their defaults)."""
    if command is None:
        return functools.partial(with_run_options, fields=fields)
    hints = typing.get_type_hints(command, include_extras=True)
    kw_only = inspect.Parameter.KEYWORD_ONLY
    own = [
        inspect.Parameter(p.name, kw_only, default=p.default, annotation=hints[p.name])
        for p in list(inspect.signature(command).parameters.values())[1:]  # after `opts`
    ]
    every = typing.get_type_hints(RunOptions, include_extras=True)
    shown = {name: hint for name, hint in every.items() if fields is None or name in fields}
    defaults = RunOptions()
    shared = [
        inspect.Parameter(name, kw_only, default=getattr(defaults, name), annotation=hint)
        for name, hint in shown.items()
    ]

    @functools.wraps(command)
    def wrapper(**kw: Any) -> Any:
        opts = RunOptions(**{name: kw.pop(name) for name in shown})
        return command(opts, **kw)

    wrapper.__signature__ = inspect.Signature([*shared, *own])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*shared, *own]}
    return wrapper


def parse_metrics(metrics: str, k: int = 1, x: str = "step") -> list[str]:
    """--metrics as a list of columns, with the checks of --smooth and --x (`grok plot`, `figure`, `report`)."""
    from engine.config import ConfigError

    cols = [m.strip() for m in metrics.split(",") if m.strip()]
    if not cols:
        raise ConfigError("--metrics: give at least one metric column, e.g. val_acc")
    if k < 1:
        raise ConfigError(f"--smooth must be >= 1 (got {k})")
    if x not in ("step", "epoch"):
        raise ConfigError(f"--x must be step or epoch (got {x!r})")
    return cols


def out_dir(out: str, old: str | None) -> str:
    """--out DIR, or the deprecated `-o DIR` with a note on stderr (kept working for one release)."""
    if old is None:
        return out
    deprecated("-o DIR", "--out DIR")
    return old


def deprecated(old: str, new: str) -> None:
    with contextlib.suppress(OSError):
        print(f"note: {old} is deprecated and will be removed in the next release; use {new}", file=sys.stderr)
