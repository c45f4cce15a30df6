"""The Circuit view: progress measures, key frequencies over time and the embedding ring (docs/PROBES.md)."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import TabPane

from grok_tui.charts import circuit
from grok_tui.charts.views import Axis
from grok_tui.rundata import RunData
from grok_tui.widgets.heat_map import HeatMap
from grok_tui.widgets.line_chart import LineChart
from grok_tui.widgets.ring_chart import RingChart


class CircuitPane(TabPane):
    """Losses and the key-frequency heat map stacked on the left, the ring on the right (below when narrow)."""

    DEFAULT_CSS = """
    CircuitPane #circuit-left { width: 1fr; height: 1fr; }
    CircuitPane #circuit-ring { width: 1fr; height: 1fr; }
    """

    def __init__(self, data: Callable[[], RunData], axis: Callable[[], Axis], at: Callable[[], int | None]) -> None:
        super().__init__("Circuit", id="tab-circuit")
        self.data, self.axis, self.at = data, axis, at

    def compose(self) -> ComposeResult:
        d, ax, at = self.data, self.axis, self.at
        with Horizontal(id="circuit-row"):
            with Vertical(id="circuit-left"):
                yield LineChart(lambda: circuit.losses(d(), ax()), id="circuit-loss")
                yield HeatMap(lambda: circuit.key_heat(d(), at()), id="circuit-keys")
            yield RingChart(lambda: circuit.ring_view(d(), at()), id="circuit-ring")
