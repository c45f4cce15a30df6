"""Base of the lab's charts: a widget that redraws only when its data or its view changed."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from rich.text import Text
from textual.widget import Widget


class Chart(Widget):
    """Draws `draw(spec, width, height, mono)` of `source()`; `poll(stamp)` refreshes if stamp moved."""

    DEFAULT_CSS = "Chart { height: 1fr; width: 1fr; }"

    def __init__(self, source: Callable[[], Any], **kw: Any) -> None:
        super().__init__(**kw)
        self.source = source
        self._stamp: Hashable = None
        self.draws = 0  # how many times this chart drew (tests, bench)

    def poll(self, stamp: Hashable) -> bool:
        """Called by the app's redraw timer; repaints only when something changed."""
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        self.refresh()
        return True

    def render(self) -> Text:
        self.draws += 1
        size = self.content_size
        return self.draw(self.source(), size.width, size.height, self.app.no_color)

    def draw(self, spec: Any, width: int, height: int, mono: bool) -> Text:
        raise NotImplementedError
