"""The chart axis keys of the lab: log/linear, the cursor, zoom, smoothing and the time scrubber."""

from __future__ import annotations

import dataclasses
from typing import Any

from textual.app import App

from grok_tui.charts import zoom
from grok_tui.charts.views import Axis
from grok_tui.rundata import RunData


class AxisKeys(App[None]):
    """GrokApp's axis actions; the state they change is `GrokApp.axis` and `GrokApp.scrub`."""

    axis: Axis
    data: RunData
    scrub: int | None

    def redraw(self, force: bool = False) -> None:
        raise NotImplementedError

    def _set_axis(self, **changes: Any) -> None:
        self.axis = dataclasses.replace(self.axis, **changes)
        self.redraw(force=True)
        from grok_tui.screens.compare import CompareScreen

        if isinstance(self.screen, CompareScreen):
            self.screen.redraw()

    def action_toggle_log(self) -> None:
        # a zoom window is kept in steps, so it stays on the same steps on either scale
        self._set_axis(log=not self.axis.log)

    def action_cursor(self, delta: float) -> None:
        """The cursor appears at the middle on the first key, then moves by `delta` of the axis."""
        f = 0.5 if self.axis.cursor is None else min(max(self.axis.cursor + delta, 0.0), 1.0)
        self._set_axis(cursor=f)

    def action_zoom(self) -> None:
        """Halve the visible step range around the cursor; with no cursor, fit the steps run so far."""
        changed = zoom.zoom_in(self.axis, float(self._axis_max()), self.data.step)
        if changed is not None:
            self._set_axis(window=changed[0], cursor=changed[1])

    def action_unzoom(self) -> None:
        self._set_axis(window=None, cursor=None)

    def action_smooth(self) -> None:
        weights = (0.0, 0.6, 0.9)
        i = weights.index(self.axis.smooth) if self.axis.smooth in weights else 0
        self._set_axis(smooth=weights[(i + 1) % len(weights)])
        self.notify(f"EMA smoothing {self.axis.smooth:g}" if self.axis.smooth else "smoothing off", timeout=2)

    def _axis_max(self) -> int:
        from grok_tui.screens.compare import CompareScreen

        if isinstance(self.screen, CompareScreen):
            return int(self.screen.x_max())
        return self.data.max_steps

    def action_scrub(self, delta: int) -> None:
        """Move the time scrubber over the logged evaluations; past the last, follow the run again."""
        with self.data.lock:
            steps = self.data.logged_steps()
        if not steps:
            self.notify("nothing logged to scrub through yet", severity="warning")
            return
        self.scrub = zoom.scrub_to(steps, self.scrub, delta)
        # the step charts' cursor follows the scrubber, so they read their values at that step too
        cursor = None if self.scrub is None else zoom.cursor_at(self.axis, float(self.data.max_steps), self.scrub)
        if cursor is not None:
            self._set_axis(cursor=cursor)
        else:
            self.redraw(force=True)

    def action_escape(self) -> None:
        if self.axis.cursor is not None:
            self._set_axis(cursor=None)
