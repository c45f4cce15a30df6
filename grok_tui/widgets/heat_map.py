"""A heat map of a per-token quantity over time (Fig. 3's gradient heat maps)."""

from __future__ import annotations

from typing import Any

from grok_tui.charts.blocks import render_heat
from grok_tui.charts.lines import Lines
from grok_tui.widgets.chart import Chart


class HeatMap(Chart):
    def draw(self, spec: dict[str, Any], width: int, height: int, mono: bool) -> Lines:
        return render_heat(width=width, height=height, mono=mono, **spec)
