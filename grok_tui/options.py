"""Run options shared by `grok run`, `grok tui` / `grok-tui` and `grok sweep`."""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer

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


@dataclass(frozen=True)
class RunOptions:
    """What to train, as `grok run` and `grok tui` take it: a preset or config file, overrides, the run root."""

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


def with_run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`command(opts: RunOptions, ...)` as a typer command whose first options are RunOptions' fields."""
    hints = typing.get_type_hints(command, include_extras=True)
    kw_only = inspect.Parameter.KEYWORD_ONLY
    own = [
        inspect.Parameter(p.name, kw_only, default=p.default, annotation=hints[p.name])
        for p in list(inspect.signature(command).parameters.values())[1:]  # after `opts`
    ]
    fields = typing.get_type_hints(RunOptions, include_extras=True)
    defaults = RunOptions()
    shared = [
        inspect.Parameter(name, kw_only, default=getattr(defaults, name), annotation=hint)
        for name, hint in fields.items()
    ]

    @functools.wraps(command)
    def wrapper(**kw: Any) -> Any:
        opts = RunOptions(**{name: kw.pop(name) for name in fields})
        return command(opts, **kw)

    wrapper.__signature__ = inspect.Signature([*shared, *own])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*shared, *own]}
    return wrapper


def out_dir(out: str, old: str | None) -> str:
    """--out DIR, or the deprecated `-o DIR` with a note on stderr (kept working for one release)."""
    if old is None:
        return out
    deprecated("-o DIR", "--out DIR")
    return old


def deprecated(old: str, new: str) -> None:
    try:
        print(f"note: {old} is deprecated and will be removed in the next release; use {new}", file=sys.stderr)
    except OSError:
        pass
