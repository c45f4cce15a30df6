"""Base of the widgets the lab draws itself: Lines turned into Strips once per change (line API).

Textual's generic path for `render()` (rich Text → Content → Strips, on every refresh) cost about
7× as much as drawing a chart (profiled in App.run_test), and about 9 ms per status-bar update.
A `Drawn` widget builds its Strips from `lines()` when its content, size, NO_COLOR or theme changed,
and `render_line(y)` hands them out.
"""

from __future__ import annotations

from typing import Any

from textual.strip import Strip
from textual.widget import Widget

from grok_tui.charts.lines import Lines


class Drawn(Widget):
    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._strips: list[Strip] = []
        self._key: Any = None
        self.draws = 0  # how many times this widget drew (tests, bench)

    def lines(self, width: int, height: int, mono: bool) -> Lines:
        raise NotImplementedError

    def repaint(self) -> None:
        """The content changed: draw again on the next frame."""
        self._key = None
        self.refresh()

    def render_line(self, y: int) -> Strip:
        size, mono, base = self.size, self.app.no_color, self.visual_style.rich_style
        key = (size, mono, base)  # a resize, NO_COLOR or a theme change also redraws
        if self._key != key:
            self.draws += 1
            self._strips = self.lines(size.width, size.height, mono).to_strips(size.width, size.height, base)
            self._key = key
        return self._strips[y] if 0 <= y < len(self._strips) else Strip.blank(size.width, base)

    @property
    def shown(self) -> str:
        """The text on screen now (tests)."""
        return "\n".join(s.text for s in self._strips)
