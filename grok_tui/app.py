"""The lab app: one live run drawn from the engine's event stream, with controls and a redraw timer."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal
from textual.widgets import Footer, TabbedContent, TabPane
from textual.worker import Worker, get_current_worker

from engine.config import RunConfig
from engine.events import Status
from engine.train.run import RunHandle
from grok_tui import launch, runner, stop_signals
from grok_tui.axis_keys import AxisKeys
from grok_tui.charts import views
from grok_tui.cpu_budget import UI_SHARE, CpuBudget
from grok_tui.options import RunOptions
from grok_tui.run_keys import RunKeys
from grok_tui.rundata import RunData
from grok_tui.widgets.bar_chart import BarChart
from grok_tui.widgets.chart import Chart
from grok_tui.widgets.circuit_pane import CircuitPane
from grok_tui.widgets.heat_map import HeatMap
from grok_tui.widgets.line_chart import LineChart
from grok_tui.widgets.status_bar import StatusBar

WIDE = 120  # columns from which paired charts sit side by side
BIG = (150, 44)  # from this size the overview of every chart is the first view
QUIT_WAIT_S = 1.5  # the engine gets this long to close its log before the app exits anyway
# A dropped SSH connection (SIGHUP), a `kill` (SIGTERM) or SIGINT close the run as `q` does:
# status interrupted, a checkpoint at the current step, every row kept (grok_tui/stop_signals.py).
# While training, the step counter and steps/s change at every progress event; each repaint of
# the status bar is a compositor frame (~8 ms under the profiler), so it repaints at most this
# often (a change of status or phase shows at once).
STATUS_EVERY_S = 0.5
VIEW_NAMES = ("Training", "Tokens", "Curvature", "Spectra", "Fourier", "Circuit", "All")


class GrokApp(AxisKeys, RunKeys, App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "grok-tui"
    ENABLE_COMMAND_PALETTE = False
    # The footer shows the keys in this order; at 80 columns all of them fit (tests/tui/test_80_columns.py):
    # help, quit, pause, the view, fork, the cursor, zoom, smoothing, the scrubber, stop and compare. The rest
    # (rerun, new, export, log axis, loss) are in `?`'s help.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "help", key_display="?", tooltip="this help"),
        Binding("q", "quit", "quit", tooltip="quit: stop the engine, log the run as interrupted"),
        Binding("space", "pause", "pause", key_display="␣", tooltip="pause or resume training"),
        Binding("t", "next_view", "tab", tooltip="next view: " + ", ".join(VIEW_NAMES)),
        Binding(
            "f",
            "fork",
            "fork",
            tooltip="fork the run at the cursor's kept step (or its latest) with changes",
        ),
        Binding(
            "comma",
            "cursor(-0.01)",
            "cursor",
            key_display=",",
            tooltip="cursor left: every chart of the view reads its values",
        ),
        Binding("full_stop", "cursor(0.01)", "cursor", key_display=".", show=False, tooltip="cursor right"),
        Binding("less_than_sign", "cursor(-0.1)", "cursor", key_display="<", show=False, tooltip="cursor 10× left"),
        Binding("greater_than_sign", "cursor(0.1)", "cursor", key_display=">", show=False, tooltip="cursor 10× right"),
        Binding("z", "zoom", "zoom", tooltip="zoom in: around the cursor, or onto the steps run so far"),
        Binding("Z", "unzoom", "unzoom", show=False, tooltip="zoom out to the whole run (and hide the cursor)"),
        Binding("m", "smooth", "ema", tooltip="EMA smoothing of the step charts: off, 0.6, 0.9 (raw faint)"),
        Binding(
            "left_square_bracket",
            "scrub(-1)",
            "time",
            key_display="[",
            tooltip="time scrubber: Tokens, heat map, Fourier, Circuit one evaluation back",
        ),
        Binding(
            "right_square_bracket",
            "scrub(1)",
            "time",
            key_display="]",
            show=False,
            tooltip="scrub forward (past the last: follow the run again)",
        ),
        Binding("s", "stop", "stop", tooltip="stop: finish the run cleanly (status finished)"),
        Binding("r", "restart", "rerun", show=False, tooltip="restart with the same config and the next seed"),
        Binding("n", "new", "new", show=False, tooltip="new run from the preset picker (probes included)"),
        Binding("e", "export", "csv", show=False, tooltip="export the run to CSV beside it, and a figure of the view"),
        Binding("l", "toggle_log", "log", show=False, tooltip="toggle the log / linear step axis"),
        Binding("o", "toggle_loss", "loss", show=False, tooltip="show loss instead of accuracy (narrow terminals)"),
        Binding("c", "compare", "compare", tooltip="overlay a column (y cycles it) of several runs"),
        Binding("escape", "escape", "hide cursor", key_display="esc", show=False, tooltip="hide the cursor"),
        # Textual reads ctrl+c as a key (the terminal is raw), so no SIGINT arrives: exit as SIGINT would (130)
        Binding("ctrl+c", "interrupt", "quit", show=False, priority=True, tooltip="quit, as q does; exit code 130"),
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
        resume: runner.RunFactory | None = None,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.continue_run = resume  # the first run continues a run directory (`--resume`)
        self.stop_signal: int | None = None  # the signal that closed the app, if any
        self.engine_done: threading.Event | None = None  # set when the current run's thread has ended
        self.trained = False  # a run was started here (the exit prints its directory and summary)
        self._quitting = False
        self.out = Path(out)
        self.data = opened or RunData(label=cfg.preset if cfg else "")
        if opened is None and cfg is None:
            self.data.status = Status.IDLE
        self.opened = opened is not None
        self.compare_dirs = list(compare or [])
        self.overrides = dict(overrides or {})
        self.run_factory = run_factory
        self.redraw_hz = redraw_hz
        self.budget = CpuBudget(ui_share)  # the UI thread's share of a core while a run trains
        self._charts_at = 0.0  # wall time of the last chart redraw
        self._status_at = 0.0
        self._status_key: tuple[Any, ...] = ()
        self.deferred = 0  # chart redraws put off by the CPU budget (tests, bench)
        self.engine: RunHandle | None = None
        self.worker: Worker[None] | None = None
        self.axis = views.Axis(log=True)  # the log step axis (docs/references/step-axis.md); zoom, cursor, EMA
        self.scrub: int | None = None  # the time scrubber's step; None follows the run
        self.last_export: Path | None = None
        self.last_figure: Path | None = None  # `e`'s figure, when matplotlib is installed

    def compose(self) -> ComposeResult:
        def d() -> RunData:  # the charts read the current run, its axis and the scrubber's step
            return self.data

        def ax() -> views.Axis:
            return self.axis

        def at() -> int | None:
            return self.scrub

        yield StatusBar(id="status")
        with TabbedContent(initial="tab-train", id="tabs"):
            with TabPane("Training", id="tab-train"), Horizontal(classes="pair", id="train-pair"):
                yield LineChart(lambda: views.accuracy(d(), ax()), id="acc")
                yield LineChart(lambda: views.loss(d(), ax()), id="loss")
            with TabPane("Tokens", id="tab-tokens"), Horizontal(classes="pair"):
                yield BarChart(lambda: views.token_bars(d(), at()), id="tokens")
                yield HeatMap(lambda: views.grad_heat(d(), at()), id="heat")
                yield LineChart(lambda: views.balance(d(), ax()), id="balance")  # shown with probe.balance
            with TabPane("Curvature", id="tab-curv"), Horizontal(classes="pair"):
                yield LineChart(lambda: views.curvature(d(), ax()), id="curv")
                yield LineChart(lambda: views.accuracy(d(), ax()), id="curv-acc")
            with TabPane("Spectra", id="tab-spectra"), Horizontal(classes="pair"):
                yield LineChart(lambda: views.ranks(d(), ax()), id="rank")
                yield LineChart(lambda: views.ratios(d(), ax()), id="ratio")
            with TabPane("Fourier", id="tab-fourier"):
                yield BarChart(lambda: views.fourier_bars(d(), at()), id="fourier")
            yield CircuitPane(d, ax, at)  # the progress probe (grok_tui/widgets/circuit_pane.py)
            with TabPane("All", id="tab-all"), Grid(id="overview"):
                yield LineChart(lambda: views.accuracy(d(), ax()), id="all-acc")
                yield LineChart(lambda: views.loss(d(), ax()), id="all-loss")
                yield BarChart(lambda: views.token_bars(d(), at()), id="all-tokens")
                yield HeatMap(lambda: views.grad_heat(d(), at()), id="all-heat")
                yield LineChart(lambda: views.curvature(d(), ax()), id="all-curv")
                yield LineChart(lambda: views.ranks(d(), ax()), id="all-rank")
                yield LineChart(lambda: views.ratios(d(), ax()), id="all-ratio")
                yield BarChart(lambda: views.fourier_bars(d(), at()), id="all-fourier")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.main_screen = self.screen
        self.status_bar = self.query_one(StatusBar)
        self.tabs = self.query_one("#tabs", TabbedContent)
        self.on_resize()
        if self.size.width >= BIG[0] and self.size.height >= BIG[1]:
            self.tabs.active = "tab-all"
        self.set_interval(1 / self.redraw_hz, self.redraw)
        if not self.is_headless:  # run_test() shares the test process: leave its signals alone
            stop_signals.install(self)
        if self.cfg is not None and not self.opened:
            self.start_run(self.cfg, self.continue_run)
        elif self.compare_dirs:
            self.action_compare()
        elif not self.opened:
            self.action_new()
        self.redraw(force=True)

    MAIN_ONLY = frozenset({"next_view", "scrub", "compare"})  # keys of the main screen's views

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The main screen's view keys are neither shown nor acted on over another screen (compare, help):
        the compare view's own keys and the app's fit its 80-column footer."""
        over = hasattr(self, "main_screen") and self.screen is not self.main_screen
        return not (over and action in self.MAIN_ONLY)

    def on_unmount(self) -> None:
        """However the app ends (q, a signal, an exception in a test), the engine thread stops too."""
        if self.engine is not None and self.data.live:
            self.engine.stop(Status.INTERRUPTED)

    def on_resize(self) -> None:
        if not hasattr(self, "main_screen"):
            return
        self.main_screen.set_class(self.size.width >= WIDE, "-wide")

    # --- drawing: on a timer, from buffered data, only what is visible and changed -------------

    def _show_status(self, force: bool) -> None:
        d, now = self.data, time.perf_counter()
        key = (id(d), d.status, d.phases.memorized_step, d.phases.generalized_step, d.error, d.run_dir)
        if force or key != self._status_key or now - self._status_at >= STATUS_EVERY_S:
            self.status_bar.show(d)
            self._status_key, self._status_at = key, now

    @property
    def chart_stamp(self) -> tuple[Any, ...]:
        """Moves whenever a chart of the main screen may show something new: run, data, axis, scrubber."""
        return (id(self.data), self.data.plot_version, self.axis, self.scrub)

    def redraw(self, force: bool = False) -> None:
        """The timer's tick; `force` for a key the user pressed (a view or axis change)."""
        if not self.is_running or not self.screen_stack or self.screen is not self.main_screen:
            return
        within = self.budget.within(self.data.live, self._charts_at)
        self.main_screen.set_class(self.data.has("target_grad_step"), "-balance")  # the Tokens view's third chart
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

    def start_run(self, cfg: RunConfig, factory: runner.RunFactory | None = None) -> None:
        if self.engine is not None and self.data.live:
            self.engine.stop(Status.INTERRUPTED)
        self.cfg, self.opened, self.engine, self.trained = cfg, False, None, True
        self.data = RunData(label=cfg.preset)
        self.worker = self._train(cfg, self.data, factory or self.run_factory)
        self.redraw(force=True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="engine")
    def _train(self, cfg: RunConfig, data: RunData, factory: runner.RunFactory) -> None:
        worker = get_current_worker()
        done = self.engine_done = threading.Event()

        def keep(run: RunHandle) -> None:
            if data is self.data:
                self.engine = run

        try:
            runner.consume(factory, cfg, self.out, data, lambda: worker.is_cancelled, keep)
        finally:
            done.set()  # the run directory is closed: a hangup may exit now

    # --- controls ------------------------------------------------------------------------------

    def _live_run(self) -> RunHandle | None:
        if self.engine is None or not self.data.live:
            self.notify("no run in progress", severity="warning")
            return None
        return self.engine

    def action_pause(self) -> None:
        if (run := self._live_run()) is None:
            return
        if self.data.status == Status.PAUSED:
            run.unpause()
        else:
            run.pause()

    def action_stop(self) -> None:
        if (run := self._live_run()) is not None:
            run.stop(Status.FINISHED)
            self.notify("stopping: the run finishes at the next step")

    def action_restart(self) -> None:
        if self.cfg is None:
            self.notify("no config to restart; press n for a new run", severity="warning")
            return
        from engine.config.resolve import resolve

        seed = self.cfg.train.seed + 1
        self.start_run(resolve(self.cfg, seed=seed))
        self.notify(f"restarted with seed {seed}")

    def action_new(self) -> None:
        from grok_tui.screens.picker import PickerScreen

        if isinstance(self.screen, PickerScreen):
            return

        def picked(cfg: RunConfig | None) -> None:
            if cfg is not None:
                self.start_run(cfg)

        self.push_screen(PickerScreen(self.cfg, self.overrides), picked)

    def action_toggle_loss(self) -> None:
        self.main_screen.toggle_class("-show-loss")
        self.tabs.active = "tab-train"

    def action_next_view(self) -> None:
        ids = [str(p.id) for p in self.tabs.query(TabPane)]
        self.tabs.active = ids[(ids.index(self.tabs.active) + 1) % len(ids)]

    def action_compare(self) -> None:
        from grok_tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(self.out, self.compare_dirs))

    def action_help(self) -> None:
        from grok_tui.screens.help import HelpScreen

        self.push_screen(HelpScreen([b for b in self.BINDINGS if isinstance(b, Binding)]))

    async def action_interrupt(self) -> None:
        """ctrl+c: quit as `q` does, and exit with 128 + SIGINT as the README's table says."""
        self.stop_signal = self.stop_signal or int(signal.SIGINT)
        await self.action_quit()

    async def action_quit(self) -> None:
        """Stop the engine, let it close the run log as interrupted, and exit within 2 s.

        The engine stops at its next step, logs a last row there and checkpoints it (engine/train/run.py);
        should that take longer, the worker is cancelled and the process still waits for the
        engine thread before it ends, so the checkpoint is never cut short.
        """
        if self._quitting:
            return
        self._quitting = True
        if self.engine is not None and self.data.live:
            self.engine.stop(Status.INTERRUPTED)
        deadline = time.monotonic() + QUIT_WAIT_S
        while self.worker is not None and not self.worker.is_finished and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        self.workers.cancel_group(self, "engine")
        self.exit()


def create_app(
    opts: RunOptions | str | None = None,
    *,
    open_dir: str | None = None,
    compare: list[str] | None = None,
    resume_dir: str | None = None,
    run_factory: runner.RunFactory = runner.make_run,
    redraw_hz: float = 5.0,
    ui_share: float = UI_SHARE,
    **run: Any,
) -> GrokApp:
    """The app for a command line (`opts`, or a preset name and RunOptions' fields as keywords); raises
    ConfigError for bad options before any screen opens."""
    if not isinstance(opts, RunOptions):
        opts = RunOptions(opts, **run)
    start = launch.resolve(opts, open_dir, compare, resume_dir)
    return GrokApp(
        start.cfg, start.out, start.opened, compare, start.overrides, run_factory, redraw_hz, ui_share, start.resume
    )
