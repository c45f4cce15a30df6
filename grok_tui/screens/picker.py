"""The `n` screen: pick a preset, edit the common fields, start; the engine's checks validate them."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from engine.config import RunConfig

# The fields a user changes most between the paper's experiments (§5, Figs. 4-6), and the probes.
FIELDS = (
    ("data.op", "op"),
    ("data.split", "split"),
    ("data.skew", "skew"),
    ("optim.name", "optimizer"),
    ("optim.lr", "lr"),
    ("optim.lr_ratio", "c = lr_E/lr"),
    ("train.batch_size", "batch size"),
    ("train.seed", "seed"),
    ("train.max_steps", "steps"),
    # the instruments (0 = off): cadences in steps, as in the presets' [probe] tables
    ("probe.hessian_every", "Hessian every"),
    ("probe.rank_every", "ranks every"),
    ("probe.grad_every", "grad every"),
    ("probe.fourier_every", "Fourier every"),
)


def field_value(cfg: RunConfig, key: str) -> str:
    group, name = key.split(".")
    return str(getattr(getattr(cfg, group), name))


class PickerScreen(Screen[RunConfig | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel"), Binding("ctrl+s", "start", "start")]
    DEFAULT_CSS = """
    PickerScreen { layout: vertical; }
    PickerScreen #picker-body { height: 1fr; }
    PickerScreen OptionList { width: 2fr; height: 1fr; }
    PickerScreen #form { width: 3fr; height: 1fr; padding: 0 1; }
    PickerScreen .row { height: 1; }
    PickerScreen .row Label { width: 13; }
    PickerScreen Input { height: 1; border: none; padding: 0 1; width: 1fr; }
    PickerScreen Input:focus { border: none; text-style: underline; background: $boost; }
    PickerScreen #description { height: auto; max-height: 3; color: $text-muted; }
    PickerScreen #picker-error { height: auto; color: $error; text-style: bold; }
    PickerScreen #buttons { height: 1; }
    PickerScreen Button { margin-right: 2; }
    """

    def __init__(self, current: RunConfig | None = None, overrides: dict[str, Any] | None = None) -> None:
        super().__init__()
        from engine.config.presets import all_presets

        self.presets = all_presets()
        self.current = current
        self.overrides = dict(overrides or {})
        self.chosen: Any = None  # the preset highlighted

    def compose(self) -> ComposeResult:
        yield Label("New run: pick a preset (↑/↓), edit, then Start (enter in a field, or ctrl+s)", id="title")
        with Horizontal(id="picker-body"):
            options = [Option(f"{p.name}{' (sweep)' if p.is_sweep else ''}", id=p.name) for p in self.presets]
            yield OptionList(*options, id="presets")
            with VerticalScroll(id="form"):
                yield Static("", id="description")
                for key, label in FIELDS:
                    with Horizontal(classes="row"):
                        yield Label(label)
                        yield Input(id="f-" + key.replace(".", "-"))
                yield Static("", id="picker-error")
                with Horizontal(id="buttons"):
                    yield Button("Start", id="start", variant="primary", compact=True)
                    yield Button("Cancel", id="cancel", compact=True)

    def on_mount(self) -> None:
        names = [p.name for p in self.presets]
        start = self.current.preset if self.current and self.current.preset in names else "skewed_mul"
        opts = self.query_one("#presets", OptionList)
        opts.highlighted = names.index(start) if start in names else 0
        self._fill(self.presets[opts.highlighted or 0], self.current)
        opts.focus()

    def _fill(self, preset: Any, cfg: RunConfig | None = None) -> None:
        from engine.config.resolve import resolve

        self.chosen = preset
        base = cfg if cfg is not None and cfg.preset == preset.name else preset.config
        try:
            base = resolve(base, {k: v for k, v in self.overrides.items() if k not in dict(FIELDS)})
            shown = resolve(base, {k: v for k, v in self.overrides.items() if k in dict(FIELDS)})
        except ValueError:
            shown = base
        note = "  (a sweep: this starts its base config; `grok sweep` runs the grid)" if preset.is_sweep else ""
        self.query_one("#description", Static).update(f"{preset.name}: {preset.description}{note}")
        for key, _ in FIELDS:
            self.query_one("#f-" + key.replace(".", "-"), Input).value = field_value(shown, key)
        self.query_one("#picker-error", Static).update("")

    @on(OptionList.OptionHighlighted, "#presets")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._fill(self.presets[event.option_index])

    @on(OptionList.OptionSelected, "#presets")
    def _selected(self) -> None:
        self.query_one("#f-data-op", Input).focus()

    def validate(self) -> RunConfig | None:
        """The engine's own checks (apply_overrides and the config dataclasses); errors shown inline."""
        from engine.config.resolve import resolve

        error = self.query_one("#picker-error", Static)
        values = {key: self.query_one("#f-" + key.replace(".", "-"), Input).value.strip() for key, _ in FIELDS}
        extra = {k: v for k, v in self.overrides.items() if k not in values}
        try:
            cfg = resolve(self.chosen, {**extra, **values})
        except ValueError as e:  # ConfigError is a ValueError
            error.update(f"error: {e}")
            return None
        error.update("")
        return cfg

    @on(Input.Submitted)
    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        cfg = self.validate()
        if cfg is not None:
            self.dismiss(cfg)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
