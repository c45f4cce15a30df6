"""The embedding ring: E's rows in the plane of the strongest key frequency, one point per token."""

from __future__ import annotations

from typing import Any

from grok_tui.charts.circuit import render_ring
from grok_tui.charts.lines import Lines
from grok_tui.widgets.chart import Chart


class RingChart(Chart):
    def draw(self, spec: dict[str, Any], width: int, height: int, mono: bool) -> Lines:
        return render_ring(width=width, height=height, mono=mono, **spec)
