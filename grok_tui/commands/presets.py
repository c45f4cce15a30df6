"""`grok presets [NAME]`: list presets, or print one resolved as TOML."""

from __future__ import annotations

from typing import Annotated

import typer

from grok_tui.commands.width import columns, fit
from grok_tui.errors import user_errors


def fold_toml(toml: str, width: int | None = None) -> str:
    """A TOML text whose long `key = "string"` lines become multi-line basic strings that fit `width`:
    a line ending in a backslash joins the next one without the newline (TOML 1.0), so the value read
    back is the same string."""
    width = width or columns()
    out = []
    for line in toml.splitlines():
        key, sep, value = line.partition(" = ")
        if len(line) <= width or not sep or not (value.startswith('"') and value.endswith('"')) or '"""' in value:
            out.append(line)
            continue
        words, cur, body = value[1:-1].split(" "), "", []
        for w in words:
            if cur and len(cur) + 1 + len(w) + 2 > width:  # room for the " \" at the end
                body.append(cur + " \\")
                cur = w
            else:
                cur = f"{cur} {w}" if cur else w
        out += [f'{key} = """', *body, cur + '"""']
    return "\n".join(out) + ("\n" if toml.endswith("\n") else "")


app = typer.Typer()  # `grok presets`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def presets(
    name: Annotated[str | None, typer.Argument(help="Print this preset's resolved config.")] = None,
    wide: Annotated[bool, typer.Option("--wide", help="Whole descriptions, however long the line.")] = False,
) -> None:
    """List every preset with its description, or print one as TOML."""
    from engine.config.presets import all_presets, load_preset, preset_toml

    if name:
        toml = preset_toml(load_preset(name))
        typer.echo(toml if wide else fold_toml(toml), nl=False)
        return
    items = all_presets()
    width = max(len(p.name) for p in items)
    for p in items:
        tag = "sweep " if p.is_sweep else "      "
        wall = f"  [{p.wall_time}]" if p.wall_time else ""
        line = f"{p.name:<{width}}  {tag}{p.description}{wall}"
        typer.echo(line if wide else fit(line))
