"""A heat map of a per-token quantity over time (Fig. 3's gradient heat maps)."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from grok_tui.blocks import render_heat
from grok_tui.widgets.chart import Chart


class HeatMap(Chart):
    def draw(self, spec: dict[str, Any], width: int, height: int, mono: bool) -> Text:
        self.last_spec = spec
        return render_heat(width=width, height=height, mono=mono, **spec)
