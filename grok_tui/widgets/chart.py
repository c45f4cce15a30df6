"""Base of the lab's charts: a widget that redraws only when its data or its view changed.

Charts use Textual's line API: `render_line(y)` hands out Strips that the chart builds itself from
its rich Text, once per change. Textual's generic path (Text → Content → Strips, per refresh) cost
about 10x more than drawing the chart, and with eight charts redrawn after every evaluation it
was most of the UI's share of the 2 cores (see bench/bench_tui.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from rich.console import Console
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

_CONSOLE = Console(width=10_000, color_system="truecolor", legacy_windows=False)  # only renders Text


def text_to_strips(text: Text, width: int, height: int) -> list[Strip]:
    """One Strip per line of `text`, cropped or padded to `width`, `height` lines in all."""
    strips = [
        Strip(list(line.render(_CONSOLE))).adjust_cell_length(width)
        for line in text.split("\n", allow_blank=True)[:height]
    ]
    strips.extend(Strip.blank(width) for _ in range(height - len(strips)))
    return strips


class Chart(Widget):
    """Draws `draw(spec, width, height, mono)` of `source()`; `poll(stamp)` refreshes if stamp moved."""

    DEFAULT_CSS = "Chart { height: 1fr; width: 1fr; }"

    def __init__(self, source: Callable[[], Any], **kw: Any) -> None:
        super().__init__(**kw)
        self.source = source
        self._stamp: Hashable = None
        self._strips: list[Strip] = []
        self._strips_key: tuple[Size, bool, Any] | None = None
        self.draws = 0  # how many times this chart drew (tests, bench)

    def stale(self, stamp: Hashable) -> bool:
        return stamp != self._stamp

    def poll(self, stamp: Hashable) -> bool:
        """Called by the app's redraw timer; repaints only when something changed."""
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        self._strips_key = None
        self.refresh()
        return True

    def render(self) -> Text:
        """The chart as rich Text (snapshots of a single chart, tests); the screen uses render_line."""
        size = self.content_size
        return self.draw(self.source(), size.width, size.height, self.app.no_color)

    def render_line(self, y: int) -> Strip:
        size, mono, base = self.size, self.app.no_color, self.visual_style.rich_style
        key = (size, mono, base)  # a resize, NO_COLOR or a theme change also redraws
        if self._strips_key != key:
            self.draws += 1
            text = self.draw(self.source(), size.width, size.height, mono)
            self._strips = [s.apply_style(base) for s in text_to_strips(text, size.width, size.height)]
            self._strips_key = key
        return self._strips[y] if 0 <= y < len(self._strips) else Strip.blank(size.width)

    def draw(self, spec: Any, width: int, height: int, mono: bool) -> Text:
        raise NotImplementedError
