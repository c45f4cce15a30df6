"""What charts draw (grok_tui.charts.lines): runs of styled text, handed to Textual as fixed-size Strips."""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style
from rich.text import Text

from grok_tui.charts.canvas import Line, Plot, render_plot
from grok_tui.charts.lines import Lines
from grok_tui.charts.series import Trace


def trace_of(xs: Sequence[float], ys: Sequence[float]) -> Trace:
    """A trace built from whole columns."""
    t = Trace(max(xs) if xs else 1.0)
    for x, y in zip(xs, ys, strict=True):
        t.add(x, y)
    return t


def test_plot_strips_keep_text_and_styles_at_the_widget_size() -> None:
    xs = list(range(0, 1000, 10))
    val = Line("val", trace_of(xs, [x / 1000 for x in xs]).points(True), "magenta", "v")
    plot = Plot("accuracy", [val], 1000, True)
    drawn = render_plot(plot, 50, 14, mono=False)
    base = Style(bgcolor="black")
    strips = drawn.to_strips(50, 14, base)
    assert len(strips) == 14 and all(s.cell_length == 50 for s in strips)
    assert [s.text.rstrip() for s in strips] == [line.rstrip() for line in drawn.plain.split("\n")]
    styles = [seg.style for s in strips for seg in s if seg.text.strip()]
    assert all(st is not None and st.bgcolor == base.bgcolor for st in styles)  # every run sits on the widget's style
    assert any(st is not None and st.color and st.color.name == "magenta" for st in styles)  # the series colour
    assert any(st is not None and st.bold for st in styles)  # the title


def test_lines_split_newlines_crop_and_pad() -> None:
    drawn = Lines().append("abcdef\nxy", style="red").append_text(Text("z", style="bold"))
    assert drawn.plain == "abcdef\nxyz"
    strips = drawn.to_strips(4, 3, Style())
    assert [s.text for s in strips] == ["abcd", "xyz ", "    "]
    assert [str(seg.style) for seg in strips[1] if seg.text.strip()] == ["red", "bold"]
