"""Base of the lab's charts: a widget that redraws only when what it shows changed."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from grok_tui.charts.lines import Lines
from grok_tui.widgets.drawn import Drawn


class Chart(Drawn):
    """Draws `draw(spec, width, height, mono)` of `source()`; `poll(stamp)` repaints if it changed."""

    DEFAULT_CSS = "Chart { height: 1fr; width: 1fr; }"

    def __init__(self, source: Callable[[], Any], **kw: Any) -> None:
        super().__init__(**kw)
        self.source = source
        self._stamp: Hashable = None
        self._spec: Any = None  # what the chart last drew, from source()

    def stale(self, stamp: Hashable) -> bool:
        return stamp != self._stamp

    def poll(self, stamp: Hashable) -> bool:
        """Called by the app's redraw timer; repaints only when what this chart shows changed.

        `stamp` moves with any new data; the chart then compares its own spec (a Plot or a dict
        of plain values, compared by value), so an evaluation that brings no Hessian value does
        not redraw the curvature chart.
        """
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        spec = self.source()
        if spec == self._spec:
            return False
        self._spec = spec
        self.repaint()
        return True

    def lines(self, width: int, height: int, mono: bool) -> Lines:
        if self._spec is None:
            self._spec = self.source()
        return self.draw(self._spec, width, height, mono)

    def draw(self, spec: Any, width: int, height: int, mono: bool) -> Lines:
        raise NotImplementedError
