"""A line chart of step-indexed series (braille pixels; log or linear step axis)."""

from __future__ import annotations

from grok_tui.charts.canvas import Plot, render_plot
from grok_tui.charts.lines import Lines
from grok_tui.widgets.chart import Chart


class LineChart(Chart):
    def draw(self, spec: Plot, width: int, height: int, mono: bool) -> Lines:
        return render_plot(spec, width, height, mono)
