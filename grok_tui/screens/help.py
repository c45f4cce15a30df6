"""The `?` screen: every key, every view, and where the numbers come from."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from engine.train.phases import GENERALIZED_ACC, MEMORIZED_ACC

VIEWS = (
    ("Training", "train, val and rare-token val accuracy (M = memorized, G = generalized, above the plot) and loss"),
    (
        "Tokens",
        "updates per token ÷ their mean, rare tokens ▲, per-token val accuracy below; gradient heat map (Fig. 3)",
    ),
    ("Curvature", "λmax of the Hessian on E and W, log y (Figs. 7, 9)"),
    ("Spectra", "rank of E, W, EW (Fig. 10); σmax(E)/σmax(W) and the c in force"),
    ("Fourier", "the current spectrum of E over the token axis (Fig. 11), y scaled to the bars shown"),
    (
        "Circuit",
        "the progress probe (probe.progress_every): restricted, excluded, train and test loss; the key "
        "frequencies over time; the embedding ring, E's rows in the plane of the strongest key frequency",
    ),
    ("All", "every chart at once, for large terminals"),
)


# The four phases every step chart marks, and the status bar's second line names (engine/train/phases.py).
PHASES = (
    ("M", f"memorized: the first evaluation with train accuracy ≥ {MEMORIZED_ACC:g}"),
    ("C", "circuit formation: restricted loss below half of chance, ln(p)/2 (progress probe)"),
    ("U", "cleanup: where ‖θ‖² fell fastest after C, once its fall slows (progress probe)"),
    ("G", f"generalized: the first evaluation with val accuracy ≥ {GENERALIZED_ACC:g}"),
)


def help_text(bindings: list[Binding]) -> Table:
    keys = Table.grid(padding=(0, 2))
    keys.add_column(style="bold")
    keys.add_column()
    for b in bindings:
        keys.add_row(b.key_display or b.key, b.tooltip or b.description)
    keys.add_row("", "")
    keys.add_row("tab / click", "move between the views; ←/→ on the tab bar")
    keys.add_row("esc", "close this screen, the picker or the compare view")
    keys.add_row("", "")
    for name, what in VIEWS:
        keys.add_row(name, what)
    keys.add_row("", "")
    for letter, what in PHASES:
        keys.add_row(letter, what)
    keys.add_row("", "")
    keys.add_row("", Text("A chart whose probe is off says which --set turns it on (or use n).", style="italic"))
    keys.add_row(
        "",
        Text(
            "The cursor (, .) reads every series of the view at one step in the chart's legend; z zooms "
            "around it, Z zooms out; m smooths with an EMA, the raw curve faint beneath. [ ] scrub the "
            "Tokens bars, heat map and Fourier spectrum back through the logged evaluations.",
            style="italic",
        ),
    )
    keys.add_row(
        "",
        Text(
            "While a run trains, charts redraw when their data changes, within about 4% of one CPU "
            "core, so a large screen full of charts may lag a few seconds; keys redraw at once.",
            style="italic",
        ),
    )
    return keys


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "close", "close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 110; height: 90%; border: round $accent;
        background: $surface; padding: 0 1; }
    """

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__()
        self.bindings = bindings  # the app's, handed in: this module never imports the app

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("grok-tui keys", style="bold"))
            self.table = help_text(self.bindings)
            yield Static(self.table)

    def action_close(self) -> None:
        self.dismiss(None)
