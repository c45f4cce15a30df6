"""The lab app: one live run drawn from the engine's event stream, with controls and a redraw timer."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal
from textual.widgets import Footer, TabbedContent, TabPane
from textual.worker import Worker, get_current_worker

from engine.config import RunConfig
from grok_tui import runner
from grok_tui.charts import views
from grok_tui.rundata import RunData
from grok_tui.widgets.bar_chart import BarChart
from grok_tui.widgets.chart import Chart
from grok_tui.widgets.heat_map import HeatMap
from grok_tui.widgets.line_chart import LineChart
from grok_tui.widgets.status_bar import StatusBar

WIDE = 120  # columns from which paired charts sit side by side
BIG = (150, 44)  # from this size the overview of every chart is the first view
QUIT_WAIT_S = 1.5  # the engine gets this long to close its log before the app exits anyway
# While a run trains, the UI thread may use at most this share of one core (measured with
# time.thread_time(), so compositing and input count too); charts that would exceed it wait.
# Training and UI share the machine's cores: the naive TUI ran at 0.78x headless (docs/TUI.md).
UI_SHARE = 0.04
UI_BURST_S = 0.15  # CPU seconds the budget may save up while idle: about two full redraws at 160x48
MAX_STALE_S = 5.0  # charts redraw at least this often, whatever the budget says
# While training, the step counter and steps/s change at every progress event; each repaint of
# the status bar is a compositor frame (~8 ms under the profiler), so it repaints at most this
# often (a change of status or phase shows at once).
STATUS_EVERY_S = 0.5


class GrokApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "grok-tui"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("space", "pause", "pause", key_display="␣", tooltip="pause or resume training"),
        Binding("s", "stop", "stop", tooltip="stop: finish the run cleanly (status finished)"),
        Binding("r", "restart", "rerun", tooltip="restart with the same config and the next seed"),
        Binding("n", "new", "new", tooltip="new run from the preset picker"),
        Binding("e", "export", "csv", tooltip="export the run to CSV beside its run directory"),
        Binding("l", "toggle_log", "log", tooltip="toggle the log / linear step axis"),
        Binding("o", "toggle_loss", "loss", tooltip="show loss instead of accuracy (narrow terminals)"),
        Binding("t", "next_view", "view", tooltip="next view: Training, Tokens, Curvature, Spectra, Fourier, All"),
        Binding("c", "compare", "compare", tooltip="overlay validation accuracy of several runs"),
        Binding("question_mark", "help", "help", key_display="?", tooltip="this help"),
        Binding("q", "quit", "quit", tooltip="quit: stop the engine, log the run as interrupted"),
    ]

    def __init__(
        self,
        cfg: RunConfig | None = None,
        out: str | Path = "runs",
        opened: RunData | None = None,
        compare: list[str] | None = None,
        overrides: dict[str, Any] | None = None,
        run_factory: runner.RunFactory = runner.make_run,
        redraw_hz: float = 5.0,
        ui_share: float = UI_SHARE,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.out = Path(out)
        self.data = opened or RunData(label=cfg.preset if cfg else "")
        if opened is None and cfg is None:
            self.data.status = "idle"
        self.opened = opened is not None
        self.compare_dirs = list(compare or [])
        self.overrides = dict(overrides or {})
        self.run_factory = run_factory
        self.redraw_hz = redraw_hz
        self.ui_share = ui_share
        self._cpu_mark, self._wall_mark = time.thread_time(), time.perf_counter()
        self._allowance = UI_BURST_S
        self._charts_at = 0.0  # wall time of the last chart redraw
        self._status_at = 0.0
        self._status_key: tuple[Any, ...] = ()
        self.deferred = 0  # chart redraws put off by the CPU budget (tests, bench)
        self.engine: Any = None
        self.worker: Worker[None] | None = None
        self.log_x = True  # the literature's log step axis (REFERENCES.md)
        self.last_export: Path | None = None

    def compose(self) -> ComposeResult:
        d, lx = lambda: self.data, lambda: self.log_x  # noqa: E731 - charts read the current run
        yield StatusBar(id="status")
        with TabbedContent(initial="tab-train", id="tabs"):
            with TabPane("Training", id="tab-train"):
                with Horizontal(classes="pair", id="train-pair"):
                    yield LineChart(lambda: views.accuracy(d(), lx()), id="acc")
                    yield LineChart(lambda: views.loss(d(), lx()), id="loss")
            with TabPane("Tokens", id="tab-tokens"):
                with Horizontal(classes="pair"):
                    yield BarChart(lambda: views.token_bars(d()), id="tokens")
                    yield HeatMap(lambda: views.grad_heat(d()), id="heat")
            with TabPane("Curvature", id="tab-curv"):
                with Horizontal(classes="pair"):
                    yield LineChart(lambda: views.curvature(d(), lx()), id="curv")
                    yield LineChart(lambda: views.accuracy(d(), lx()), id="curv-acc")
            with TabPane("Spectra", id="tab-spectra"):
                with Horizontal(classes="pair"):
                    yield LineChart(lambda: views.ranks(d(), lx()), id="rank")
                    yield LineChart(lambda: views.ratios(d(), lx()), id="ratio")
            with TabPane("Fourier", id="tab-fourier"):
                yield BarChart(lambda: views.fourier_bars(d()), id="fourier")
            with TabPane("All", id="tab-all"):
                with Grid(id="overview"):
                    yield LineChart(lambda: views.accuracy(d(), lx()), id="all-acc")
                    yield LineChart(lambda: views.loss(d(), lx()), id="all-loss")
                    yield BarChart(lambda: views.token_bars(d()), id="all-tokens")
                    yield HeatMap(lambda: views.grad_heat(d()), id="all-heat")
                    yield LineChart(lambda: views.curvature(d(), lx()), id="all-curv")
                    yield LineChart(lambda: views.ranks(d(), lx()), id="all-rank")
                    yield LineChart(lambda: views.ratios(d(), lx()), id="all-ratio")
                    yield BarChart(lambda: views.fourier_bars(d()), id="all-fourier")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.main_screen = self.screen
        self.status_bar = self.query_one(StatusBar)
        self.tabs = self.query_one("#tabs", TabbedContent)
        self._layout()
        if self.size.width >= BIG[0] and self.size.height >= BIG[1]:
            self.query_one("#tabs", TabbedContent).active = "tab-all"
        self.set_interval(1 / self.redraw_hz, self.redraw)
        if self.cfg is not None and not self.opened:
            self.start_run(self.cfg)
        elif self.compare_dirs:
            self.action_compare()
        elif not self.opened:
            self.action_new()
        self.redraw(force=True)

    def on_resize(self) -> None:
        self._layout()

    def _layout(self) -> None:
        if not hasattr(self, "main_screen"):
            return
        self.main_screen.set_class(self.size.width >= WIDE, "-wide")

    # --- drawing: on a timer, from buffered data, only what is visible and changed -------------

    def _within_budget(self) -> bool:
        """Token bucket over the UI thread's CPU time: earns ui_share × wall time, spends CPU time."""
        cpu, wall = time.thread_time(), time.perf_counter()
        earned = self.ui_share * (wall - self._wall_mark)
        allowance = self._allowance + earned - (cpu - self._cpu_mark)
        if not self.data.live:
            allowance = UI_BURST_S  # nothing trains: nothing to protect
        # debt is capped too, so a one-off cost (mounting, a resize) delays charts by ~4 s at most
        self._allowance = min(max(allowance, -UI_BURST_S), UI_BURST_S)
        self._cpu_mark, self._wall_mark = cpu, wall
        return self._allowance >= 0 or wall - self._charts_at >= MAX_STALE_S

    def _show_status(self, force: bool) -> None:
        d, now = self.data, time.perf_counter()
        key = (id(d), d.status, d.memorized_step, d.generalized_step, d.error, d.run_dir)
        if force or key != self._status_key or now - self._status_at >= STATUS_EVERY_S:
            self.status_bar.show(d)
            self._status_key, self._status_at = key, now

    @property
    def chart_stamp(self) -> tuple[int, int, bool]:
        """Moves whenever a chart of the main screen may show something new: run, data, axis."""
        return (id(self.data), self.data.plot_version, self.log_x)

    def redraw(self, force: bool = False) -> None:
        """The timer's tick; `force` for a key the user pressed (a view or axis change)."""
        if not self.is_running or not self.screen_stack or self.screen is not self.main_screen:
            return
        within = self._within_budget()
        self._show_status(force)
        pane = self.tabs.active_pane
        if pane is None:
            return
        stamp = self.chart_stamp
        charts = [c for c in pane.query(Chart) if c.display and c.stale(stamp)]
        if not charts:
            return
        if not (force or within or not self.data.live):
            self.deferred += 1
            return
        self._charts_at = time.perf_counter()
        for chart in charts:
            chart.poll(stamp)

    def on_tabbed_content_tab_activated(self) -> None:
        self.redraw(force=True)

    # --- the engine thread ---------------------------------------------------------------------

    def start_run(self, cfg: RunConfig) -> None:
        if self.engine is not None and self.data.live:
            self.engine.stop("interrupted")
        self.cfg, self.opened, self.engine = cfg, False, None
        self.data = RunData(label=cfg.preset)
        self.worker = self._train(cfg, self.data)
        self.redraw(force=True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="engine")
    def _train(self, cfg: RunConfig, data: RunData) -> None:
        worker = get_current_worker()

        def keep(run: Any) -> None:
            if data is self.data:
                self.engine = run

        runner.consume(self.run_factory, cfg, self.out, data, lambda: worker.is_cancelled, keep)

    # --- controls ------------------------------------------------------------------------------

    def _live_run(self) -> Any:
        if self.engine is None or not self.data.live:
            self.notify("no run in progress", severity="warning")
            return None
        return self.engine

    def action_pause(self) -> None:
        if (run := self._live_run()) is None:
            return
        if self.data.status == "paused":
            run.resume_training()
        else:
            run.pause()

    def action_stop(self) -> None:
        if (run := self._live_run()) is not None:
            run.stop("finished")
            self.notify("stopping: the run finishes at the next step")

    def action_restart(self) -> None:
        if self.cfg is None:
            self.notify("no config to restart; press n for a new run", severity="warning")
            return
        seed = self.cfg.train.seed + 1
        self.start_run(dataclasses.replace(self.cfg, train=dataclasses.replace(self.cfg.train, seed=seed)))
        self.notify(f"restarted with seed {seed}")

    def action_new(self) -> None:
        from grok_tui.screens.picker import PickerScreen

        if isinstance(self.screen, PickerScreen):
            return

        def picked(cfg: RunConfig | None) -> None:
            if cfg is not None:
                self.start_run(cfg)

        self.push_screen(PickerScreen(self.cfg, self.overrides), picked)

    def action_export(self) -> None:
        from engine.config import ConfigError
        from engine.export import export_runs

        if not self.data.run_dir:
            self.notify("no run directory to export yet", severity="warning")
            return
        run_dir = Path(self.data.run_dir)
        target = run_dir.parent / f"{run_dir.name}.csv"
        try:
            n = export_runs([run_dir], target)
        except ConfigError as e:
            self.notify(str(e), severity="error")
            return
        self.last_export = target
        self.notify(f"exported {n} rows to {target}", timeout=8)

    def action_toggle_log(self) -> None:
        self.log_x = not self.log_x
        self.redraw(force=True)

    def action_toggle_loss(self) -> None:
        self.main_screen.toggle_class("-show-loss")
        self.query_one("#tabs", TabbedContent).active = "tab-train"

    def action_next_view(self) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        ids = [p.id for p in tabs.query(TabPane)]
        tabs.active = ids[(ids.index(tabs.active) + 1) % len(ids)]

    def action_compare(self) -> None:
        from grok_tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(self.out, self.compare_dirs))

    def action_help(self) -> None:
        from grok_tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """Stop the engine, let it close the run log as interrupted, and exit within 2 s."""
        if self.engine is not None and self.data.live:
            self.engine.stop("interrupted")
        self.workers.cancel_group(self, "engine")
        deadline = time.monotonic() + QUIT_WAIT_S
        while self.worker is not None and not self.worker.is_finished and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        self.exit()


def create_app(
    preset: str | None = None,
    config: str | None = None,
    sets: list[str] | None = None,
    seed: int | None = None,
    steps: int | None = None,
    device: str | None = None,
    out: str | Path = "runs",
    open_dir: str | None = None,
    compare: list[str] | None = None,
    run_factory: runner.RunFactory = runner.make_run,
    redraw_hz: float = 5.0,
    ui_share: float = UI_SHARE,
) -> GrokApp:
    """The app for a command line; raises ConfigError for bad options before any screen opens."""
    from engine.config import ConfigError, parse_set
    from engine.presets import resolve_config
    from grok_tui.rundata import load_run

    overrides: dict[str, Any] = parse_set(sets or [])
    for key, v in (("train.seed", seed), ("train.max_steps", steps), ("train.device", device)):
        if v is not None:
            overrides[key] = v
    cfg, opened = None, None
    if open_dir:
        if preset or config:
            raise ConfigError("--open shows a finished run; drop --preset/--config")
        opened = load_run(open_dir)
        from engine.rundir import read_config

        cfg = read_config(Path(open_dir))
        out = Path(open_dir).parent
    elif preset or config:
        cfg, _ = resolve_config(preset, config, overrides)
    for d in compare or []:
        if (Path(d) / "group.json").is_file():  # a sweep: one mean curve and band per arm × grid cell
            from engine.sweep.spec import Group

            Group.open(d)  # an unreadable group.json is a one-line error now, not in the screen
        elif not (Path(d) / "config.json").is_file():
            raise ConfigError(f"{d}: not a run directory (no config.json) or sweep group directory (no group.json)")
    return GrokApp(cfg, out, opened, compare, overrides, run_factory, redraw_hz, ui_share)
