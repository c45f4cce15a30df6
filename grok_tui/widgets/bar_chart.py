"""A bar chart (per-token update counts, the Fourier spectrum of E)."""

from __future__ import annotations

from typing import Any

from grok_tui.charts.blocks import render_bars
from grok_tui.charts.lines import Lines
from grok_tui.widgets.chart import Chart


class BarChart(Chart):
    def draw(self, spec: dict[str, Any], width: int, height: int, mono: bool) -> Lines:
        return render_bars(width=width, height=height, mono=mono, **spec)
