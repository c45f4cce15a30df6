"""The lab's keys that act on the run directory: export it (CSV and figure) and fork it (docs/FORK.md)."""

from __future__ import annotations

import threading
from pathlib import Path

from textual import work
from textual.app import App

from engine.config import RunConfig
from engine.events import Status
from engine.train.run import RunHandle
from grok_tui import runner
from grok_tui.charts.views import Axis
from grok_tui.rundata import RunData, clean_text

STOP_WAIT_S = 15.0  # `f` with no step on a live run: the run gets this long to stop and checkpoint


class RunKeys(App[None]):
    """GrokApp's export and fork actions."""

    axis: Axis
    data: RunData
    scrub: int | None
    engine: RunHandle | None
    engine_done: threading.Event | None
    compare_dirs: list[str]
    last_export: Path | None
    last_figure: Path | None

    def start_run(self, cfg: RunConfig, factory: runner.RunFactory | None = None) -> None:
        raise NotImplementedError

    def action_export(self) -> None:
        from engine.config import ConfigError
        from engine.records.export import export_runs
        from grok_tui.screens.compare import CompareScreen

        compare = self.screen if isinstance(self.screen, CompareScreen) else None
        if not self.data.run_dir and compare is None:
            self.notify("no run directory to export yet", severity="warning")
            return
        if self.data.run_dir:
            run_dir = Path(self.data.run_dir)
            target = run_dir.parent / f"{run_dir.name}.csv"
            try:
                n = export_runs([run_dir], target)
            except ConfigError as e:
                self.notify(clean_text(e), severity="error", markup=False)  # a path may hold [brackets]
                return
            self.last_export = target
            self.notify(f"exported {n} rows to {clean_text(target)}", timeout=8, markup=False)
        if compare is not None:  # the view on screen: the compare view's runs and groups, its column
            self._export_figure(None, (compare.figure_sources(), compare.column, compare.root))
        else:
            self._export_figure(Path(self.data.run_dir), None)

    @work(thread=True, exclusive=True, group="figure", exit_on_error=False)
    def _export_figure(self, run_dir: Path | None, compare: tuple[list[str], str, Path] | None) -> None:
        """The view on screen as a figure (grok_tui/figures/view.py), when matplotlib is installed: the
        main view beside the run's CSV, or the compare view's runs and groups in the runs folder."""
        from engine.config import ConfigError
        from grok_tui.figures.view import export_compare_figure, export_view_figure

        try:
            if compare is not None:
                path = export_compare_figure(*compare, log_x=self.axis.log)
            else:
                assert run_dir is not None
                path = export_view_figure(run_dir, log_x=self.axis.log)
        except ConfigError as e:
            self.call_from_thread(self.notify, clean_text(e), severity="error", markup=False)
            return
        if path is not None:
            self.last_figure = path
            self.call_from_thread(self.notify, f"figure {clean_text(path)}", timeout=8, markup=False)
        else:  # help promises a figure of the view: say why there is none
            self.call_from_thread(
                self.notify,
                "figure skipped: matplotlib is not installed (pip install 'grok-tui[figures]')",
                severity="warning",
                timeout=8,
            )

    def action_fork(self) -> None:
        """The fork form at the cursor's step, snapped to the latest kept checkpoint at or before it
        (the scrubber's step, else the latest checkpoint); the fork then trains here (docs/FORK.md).

        The form writes the fork in a thread worker (grok_tui/screens/fork_form.py): a live parent's stop and
        its wait, fork_run's checkpoint I/O and the fork's loading all happen off the event loop."""
        from engine.config import ConfigError
        from engine.records.run import read_run
        from grok_tui.screens.fork_form import Forked, ForkForm, ForkRequest, snap

        if not self.data.run_dir:
            self.notify("no run directory to fork yet", severity="warning")
            return
        parent = Path(self.data.run_dir)
        try:
            kept = [k.step for k in read_run(parent).kept]
        except ConfigError as e:
            self.notify(clean_text(e), severity="error", markup=False)
            return
        at = self.axis.cursor_step(float(self.data.max_steps)) if self.axis.cursor is not None else self.scrub
        step = snap(kept, at) if at is not None else None
        engine, done, live = self.engine, self.engine_done, self.data.live

        def fork(req: ForkRequest) -> Forked:  # in the form's thread worker
            from engine.config import parse_set
            from engine.train.fork import fork_run
            from engine.train.interventions import parse_intervention

            if req.step is None and engine is not None and live:
                # now: the checks first, then the run stops and checkpoints at this step, and the fork starts there
                parse_set([f"{k}={v}" for k, v in req.sets.items()])
                for spec in req.interventions:
                    parse_intervention(spec)
                engine.stop(Status.INTERRUPTED)
                if done is not None and not done.wait(STOP_WAIT_S):
                    raise ConfigError(f"the run did not stop within {STOP_WAIT_S:g} s; fork at a kept step")
            path = fork_run(parent, req.step, req.sets, req.interventions, None, req.steps)
            cfg, factory = runner.resume_factory(path, None, None)
            return Forked(path, cfg, factory)

        def forked(result: Forked | None) -> None:
            if result is None:
                return
            self.compare_dirs = [str(parent), str(result.path)]  # `c` shows the parent and its fork
            self.start_run(result.cfg, result.factory)  # stops the parent, if it still trains
            from engine.rundir import short_name

            self.notify(f"fork {clean_text(short_name(result.path.name))}", timeout=8, markup=False)

        self.push_screen(ForkForm(parent, step, kept, fork, live=self.data.live), forked)
