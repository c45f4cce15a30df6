"""Base of the lab's charts: a widget that redraws only when its data or its view changed.

Charts use Textual's line API: `render_line(y)` hands out Strips that the chart builds itself,
once per change, from the runs it drew (`grok_tui.lines`). Textual's generic path for `render()`
(rich Text → Content → Strips, on every refresh) cost about ten times as much as drawing the
chart, and with eight charts redrawn after each evaluation it was most of the UI's share of the
2 cores (see bench/bench_tui.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from grok_tui.lines import Lines


class Chart(Widget):
    """Draws `draw(spec, width, height, mono)` of `source()`; `poll(stamp)` refreshes if stamp moved."""

    DEFAULT_CSS = "Chart { height: 1fr; width: 1fr; }"

    def __init__(self, source: Callable[[], Any], **kw: Any) -> None:
        super().__init__(**kw)
        self.source = source
        self._stamp: Hashable = None
        self._spec: Any = None  # what the chart last drew, from source()
        self._strips: list[Strip] = []
        self._strips_key: tuple[Size, bool, Any] | None = None
        self.draws = 0  # how many times this chart drew (tests, bench)

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
        self._strips_key = None
        self.refresh()
        return True

    def render(self) -> Text:
        """The chart as rich Text (snapshots of a single chart, tests); the screen uses render_line."""
        size = self.content_size
        return self.draw(self.source(), size.width, size.height, self.app.no_color).to_text()

    def render_line(self, y: int) -> Strip:
        size, mono, base = self.size, self.app.no_color, self.visual_style.rich_style
        key = (size, mono, base)  # a resize, NO_COLOR or a theme change also redraws
        if self._strips_key != key:
            self.draws += 1
            if self._spec is None:
                self._spec = self.source()
            drawn = self.draw(self._spec, size.width, size.height, mono)
            self._strips = drawn.to_strips(size.width, size.height, base)
            self._strips_key = key
        return self._strips[y] if 0 <= y < len(self._strips) else Strip.blank(size.width)

    def draw(self, spec: Any, width: int, height: int, mono: bool) -> Lines:
        raise NotImplementedError
