"""`grok tui` (placeholder until implemented)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    pass


def standalone() -> None:
    raise SystemExit("grok-tui: not built yet")
