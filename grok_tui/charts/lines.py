"""What a chart draws: rows of (text, style) runs, turned into Textual Strips without rich Text.

The charts append runs with rich Text's `append(text, style=...)` signature. Going through rich
Text (split into lines, render to segments, apply the widget's style) cost more than drawing the
chart: with runs turned straight into Segments, one cached Style per distinct style string, a
forced redraw of the 160x48 overview fell from about 140 to 90 ms of UI-thread CPU (loaded
machine; 70 ms quiet).
"""

from __future__ import annotations

from functools import lru_cache

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

_CONSOLE = Console(width=10_000, color_system="truecolor", legacy_windows=False)  # renders titles only

StyleLike = str | Style


@lru_cache(maxsize=512)
def _style(style: StyleLike, base: Style) -> Style:
    return base + (Style.parse(style) if isinstance(style, str) else style)


class Lines:
    """An append-only drawing: `append` / `append_text` like rich Text, `plain` for tests."""

    def __init__(self) -> None:
        self.rows: list[list[tuple[str, StyleLike]]] = [[]]

    def append(self, text: str, style: StyleLike = "") -> Lines:
        first, *rest = text.split("\n")
        if first:
            self.rows[-1].append((first, style))
        for part in rest:
            self.rows.append([(part, style)] if part else [])
        return self

    def append_text(self, text: Text) -> Lines:
        """A rich Text (a title with a legend): its style and spans become runs."""
        spans = Text()
        spans.append_text(text)  # the Text's own style becomes a span, which render() keeps
        for i, line in enumerate(spans.split("\n", allow_blank=True)):
            if i:
                self.rows.append([])
            self.rows[-1].extend((seg.text, seg.style or "") for seg in line.render(_CONSOLE) if seg.text)
        return self

    @property
    def plain(self) -> str:
        return "\n".join("".join(t for t, _ in row) for row in self.rows)

    def to_strips(self, width: int, height: int, base: Style) -> list[Strip]:
        """`height` Strips, each exactly `width` cells, every run styled on top of `base`."""
        strips = [
            Strip([Segment(t, _style(style, base)) for t, style in row]).adjust_cell_length(width, base)
            for row in self.rows[:height]
        ]
        strips.extend(Strip.blank(width, base) for _ in range(height - len(strips)))
        return strips
