"""The chart base class: Text drawn once per change, handed to Textual as fixed-size Strips."""

from __future__ import annotations

from rich.text import Text

from grok_tui.canvas import Line, Plot, render_plot
from grok_tui.series import trace_of
from grok_tui.widgets.chart import text_to_strips


def test_text_to_strips_keeps_text_and_styles_at_the_widget_size() -> None:
    xs = list(range(0, 1000, 10))
    plot = Plot("accuracy", [Line("val", trace_of(xs, [x / 1000 for x in xs]).points(True), "magenta", "v")], 1000, True)
    text = render_plot(plot, 50, 14, mono=False)
    strips = text_to_strips(text, 50, 14)
    assert len(strips) == 14 and all(s.cell_length == 50 for s in strips)
    lines = text.plain.split("\n")
    assert [s.text.rstrip() for s in strips] == [line.rstrip() for line in lines]
    styled = {str(seg.style) for s in strips for seg in s if seg.style and seg.text.strip()}
    assert "magenta" in styled and "bold" in styled  # series colour and title survive


def test_text_to_strips_crops_and_pads() -> None:
    strips = text_to_strips(Text("abcdef\nxy"), 4, 3)
    assert [s.text for s in strips] == ["abcd", "xy  ", "    "]
