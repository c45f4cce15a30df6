"""The Circuit view (grok_tui/widgets/circuit_pane.py): fed a scripted progress-probe stream through the app."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

from textual.widgets import TabbedContent

from engine.config import RunConfig
from engine.events import JOIN_SHARE, CircuitLogged, EvalLogged, Event, RunStarted, StepsTaken, TokensLogged
from engine.rundir.columns import PROGRESS_COLUMNS
from engine.summary import RunSummary
from grok_tui.app import create_app
from grok_tui.charts.blocks import RARE_GLYPH
from grok_tui.charts.circuit import COMMON_GLYPH, render_ring
from grok_tui.rundata import load_run
from grok_tui.widgets.chart import Chart
from tests.tui.conftest import BASE_COLUMNS, ScriptedRun, aio, wait_for

N, EVALS, RARE = 12, 10, (3, 7)  # axis tokens, evaluations (every 100 steps), the rare tokens


def circuit_script(cfg: RunConfig) -> Iterator[Event]:
    """A ring forming: common tokens reach the unit circle by the 6th evaluation, the rare ones by the 9th."""
    cols = BASE_COLUMNS + PROGRESS_COLUMNS
    yield RunStarted(cfg, "cpu", 40, 100, N + 3, (10,) * (N + 3), 0, 100 * EVALS, cols)
    for k in range(EVALS + 1):
        step = 100 * k
        yield StepsTaken(step, k, k, 100.0)
        row = dict.fromkeys(cols, math.nan)
        row.update(step=step, train_loss=3.0 * 0.5**k + 1e-3, train_acc=min(1.0, 0.3 * k), val_loss=4.0 - 0.3 * k)
        row.update(val_acc=min(1.0, 0.1 * k), restricted_loss=4.0 * 0.6**k, excluded_loss=0.5 + 0.3 * k)
        row.update(weight_sq=100.0 - k, rqi=0.1 * k, key_freqs=2.0, key_share=0.1 * k, gini_E=0.05 * k)
        marks = {"memorized_step": 300 if k >= 3 else None, "circuit_step": 400 if k >= 4 else None}
        marks["cleanup_step"] = 600 if k >= 7 else None
        yield EvalLogged(step, row, **marks)
        yield TokensLogged(step, (k,) * (N + 3))
        done = [min(1.0, k / (9 if t in RARE else 6)) for t in range(N)]
        theta = [2 * math.pi * t / N for t in range(N)]
        yield CircuitLogged(
            step,
            shares=tuple(0.3 * k / EVALS if w in (1, 4) else 0.01 for w in range(1, N // 2 + 1)),
            keys=(1, 4) if k >= 4 else (),
            ring_freq=1,
            tokens=tuple(range(1, N + 1)),
            x=tuple(d * math.cos(a) + (1 - d) * 0.1 * t for t, (d, a) in enumerate(zip(done, theta, strict=True))),
            y=tuple(d * math.sin(a) for d, a in zip(done, theta, strict=True)),
            distance=tuple(1 - d for d in done),
            membership=tuple(1.0 if d >= 1 else 0.1 for d in done),
            rare=tuple(t in RARE for t in range(N)),
        )


class CircuitRun(ScriptedRun):
    def _events(self) -> Iterator[Event]:
        from engine.events import RunFinished

        for ev in circuit_script(self.cfg):
            if self._stop is not None:
                break
            yield ev
        yield RunFinished(self._stop or "finished", RunSummary.written(self._summary(self._stop or "finished")))


def factory(cfg: RunConfig, out: str | Path) -> CircuitRun:
    return CircuitRun(cfg, out)


def members(shown: str) -> tuple[int, int]:
    """(in ring, rare in ring) from the ring chart's legend."""
    legend = shown.splitlines()[1]
    in_ring = int(legend.split(" in ring")[0].split("·")[-1].split("/")[0])
    rare_in = int(legend.split(RARE_GLYPH)[1].split("/")[0])
    return in_ring, rare_in


@aio
async def test_circuit_view_fills_and_scrubs_at_80x24_without_colour(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = create_app("progress_mul", out=tmp_path / "runs", run_factory=factory)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.no_color
        await wait_for(pilot, lambda: app.data.status == "finished")
        app.query_one("#tabs", TabbedContent).active = "tab-circuit"
        ring = app.query_one("#circuit-ring", Chart)
        await wait_for(pilot, lambda: "in ring" in ring.shown)
        assert members(ring.shown) == (N, len(RARE))  # the last measurement: everyone on the ring
        assert ring.shown.count(RARE_GLYPH) >= 2 and COMMON_GLYPH in ring.shown
        loss = app.query_one("#circuit-loss", Chart)
        await wait_for(pilot, lambda: "restricted" in loss.shown)
        assert {"C", "U"} <= {mark for _, mark in loss.source().markers}
        assert app.data.phases.circuit_step == 400 and app.data.phases.cleanup_step == 600
        keys = app.query_one("#circuit-keys", Chart)
        await wait_for(pilot, lambda: "key 1, 4" in keys.shown)
        # scrub back to step 700: the common tokens have joined (6th evaluation), the rare ones not yet
        for _ in range(3):  # the first press goes to the last-but-one measurement
            await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: "step 700" in ring.shown)
        assert members(ring.shown) == (N - len(RARE), 0)
        assert "(scrubbed)" in ring.shown
        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        await pilot.press("right_square_bracket")  # past the last: follow the run again
        await wait_for(pilot, lambda: app.scrub is None and "step 1,000" in ring.shown)


def test_run_dir_round_trip_and_join_steps(tmp_path: Path) -> None:
    """The run log writes keyfreq.csv, ring.csv, joins.csv; load_run reads the ring back (grok-tui --open)."""
    from engine.config.presets import load_preset
    from engine.config.resolve import resolve
    from engine.rundir import read_csv

    cfg = resolve(load_preset("progress_mul"))
    run = CircuitRun(cfg, tmp_path)
    for _ in run.events():
        pass
    joins = {int(r["token"]): r for r in read_csv(run.dir / "joins.csv")}
    rare_tokens = {t + 1 for t in RARE}  # axis token t + 1 is script index t
    assert {int(r["join_step"]) for t, r in joins.items() if t in rare_tokens} == {900}
    assert {int(r["join_step"]) for t, r in joins.items() if t not in rare_tokens} == {600}
    assert all(r["rare"] == ("1" if t in rare_tokens else "0") for t, r in joins.items())
    data = load_run(run.dir)
    last = data.circuit_history.at(None)
    assert last is not None and last[0] == 1000 and last[1].keys == (1, 4)
    assert sum(m >= JOIN_SHARE for m in last[1].membership) == N


def test_ring_render_is_square_and_marks_rare_tokens_without_colour() -> None:
    pts = ((1.0, 0.0, False, True), (-1.0, 0.0, True, True), (9.0, 9.0, False, False))  # the last off the plot
    lines = render_ring("ring", pts, 40, 12, mono=True, legend="step 1")
    rows = lines.plain.splitlines()[2:]
    assert len(rows) == 10 and all(len(r) <= 40 for r in rows)
    text = "\n".join(rows)
    assert text.count(RARE_GLYPH) == 1 and text.count(COMMON_GLYPH) == 2  # clipped to the edge, still shown
    assert all(style == "" for row in lines.rows[2:] for ch, style in row if ch in (RARE_GLYPH, COMMON_GLYPH))
