"""Run options shared by `grok run`, `grok tui` / `grok-tui` and `grok sweep`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

Preset = Annotated[str | None, typer.Option("--preset", "-p", help="Preset name (`grok presets` lists them).")]
ConfigFile = Annotated[str | None, typer.Option("--config", "-c", help="A TOML config file.")]
Set = Annotated[
    list[str] | None,
    typer.Option("--set", "-s", help="Override a config key, e.g. --set optim.lr=3e-3 (repeatable)."),
]
Seed = Annotated[int | None, typer.Option("--seed", help="Shorthand for --set train.seed=N.")]
Steps = Annotated[int | None, typer.Option("--steps", help="Shorthand for --set train.max_steps=N.")]
Device = Annotated[str | None, typer.Option("--device", help="auto, cpu, cuda, cuda:N or mps.")]
Out = Annotated[str, typer.Option("--out", help="Root directory for run directories.")]
# `-o` meant the run root here and the output file in `grok export`; it is now the file everywhere.
OutShort = Annotated[str | None, typer.Option("-o", hidden=True, help="Old spelling of --out (deprecated).")]
Output = Annotated[str, typer.Option("--output", "-o", help="Output file, or - for stdout.")]


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
