"""`grok presets [NAME]`: list presets, or print one resolved as TOML."""

from __future__ import annotations

from typing import Annotated

import typer

from grok_tui.errors import user_errors


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def presets(
        name: Annotated[str | None, typer.Argument(help="Print this preset's resolved config.")] = None,
    ) -> None:
        """List every preset with its description, or print one as TOML."""
        from engine.presets import all_presets, load_preset, preset_toml

        if name:
            typer.echo(preset_toml(load_preset(name)), nl=False)
            return
        items = all_presets()
        width = max(len(p.name) for p in items)
        for p in items:
            tag = "sweep " if p.is_sweep else "      "
            wall = f"  [{p.wall_time}]" if p.wall_time else ""
            typer.echo(f"{p.name:<{width}}  {tag}{p.description}{wall}")
