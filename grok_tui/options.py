"""Run options shared by `grok run`, `grok tui` / `grok-tui` and `grok sweep`."""

from __future__ import annotations

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
Out = Annotated[str, typer.Option("--out", "-o", help="Root directory for run directories.")]
