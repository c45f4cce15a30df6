"""A newcomer's first minute at 80×24 and 160×48: the footer keeps the keys that read a chart, the
phase letters of the Circuit view never overlap, help names the Circuit view and its phases, and a
flagship preset says what it shows and which preset to try next."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from engine.config import RunConfig
from engine.events import EvalLogged, Event, RunFinished, RunStarted, StepsTaken
from engine.rundir.columns import PROGRESS_COLUMNS
from engine.summary import RunSummary
from grok_tui.app import create_app
from grok_tui.charts.canvas import Plot, _marker_row
from grok_tui.screens.help import HelpScreen
from grok_tui.widgets.chart import Chart
from tests.tui.conftest import BASE_COLUMNS, ScriptedRun, aio, wait_for

# The phases issue 36 reported for progress_mul's run, seed 0 (C under the rule before issue 33's
# key-share condition; a fresh run now reads C = 4,200): the tightest C, U, G of the two
M, C, U, G = 400, 3_800, 4_800, 5_200
MAX_STEPS = 9_000
SIZES = [(80, 24), (160, 48)]


def phases_script(cfg: RunConfig) -> Iterator[Event]:
    """Evaluations every 100 steps to 6,400 whose EvalLogged carry M, C, U and G at progress_mul's steps."""
    cols = BASE_COLUMNS + PROGRESS_COLUMNS
    yield RunStarted(cfg, "cpu", 40, 100, 15, (10,) * 15, 0, MAX_STEPS, cols)
    for step in range(0, 6_500, 100):
        yield StepsTaken(step, step // 10, step / 100, 100.0)
        u = step / 6_400
        row = dict.fromkeys(cols, math.nan)
        row.update(step=step, train_loss=3.0 * (1 - u) + 1e-3, train_acc=min(1.0, step / M), val_loss=4.0 - 3 * u)
        row.update(val_acc=min(1.0, max(0.0, (step - 3_000) / 2_300)), restricted_loss=4.0 * (1 - u) + 0.01)
        row.update(excluded_loss=0.5 + u, weight_sq=100.0 - 10 * u)
        marks = {k: v if step >= v else None for k, v in (("memorized_step", M), ("generalized_step", G))}
        marks |= {k: v if step >= v else None for k, v in (("circuit_step", C), ("cleanup_step", U))}
        yield EvalLogged(step, row, **marks)


class PhasesRun(ScriptedRun):
    def _events(self) -> Iterator[Event]:
        yield from phases_script(self.cfg)
        yield RunFinished("finished", RunSummary.written(self._summary("finished")))


def _marker_line(shown: str) -> str:
    """The row of phase letters of a step chart: the line after its title."""
    return shown.split("\n")[1]


def assert_letters_apart(row: str) -> None:
    """M, C, U, G each once, in step order, each with a blank (or the cursor, or its step) beside it."""
    letters = [(i, ch) for i, ch in enumerate(row) if ch in "MCUG"]
    assert [ch for _, ch in letters] == ["M", "C", "U", "G"], row
    for (i, _), (j, _) in itertools.pairwise(letters):
        assert j - i >= 2, row  # never two letters in adjacent cells ("UG")
    for step in (f"{s:,}" for s in (M, C, U, G)):
        assert row.count(step) <= 1, row


@pytest.mark.parametrize("width", [20, 40, 72, 101, 152])
@pytest.mark.parametrize("cursor", [None, float(C), float(U), float(G)])
def test_marker_row_never_overlaps(width: int, cursor: float | None) -> None:
    plot = Plot("", [], MAX_STEPS, True, markers=[(M, "M"), (G, "G"), (C, "C"), (U, "U")], cursor=cursor)
    row = "".join(ch for ch, _ in _marker_row(plot, width))
    assert len(row) == width
    assert_letters_apart(row)
    if cursor is not None:
        assert row.count("▼") == 1  # the cursor never hides a letter, nor a letter the cursor


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@aio
async def test_footer_shows_the_cursor_keys(tmp_path: Path, scripted, size: tuple[int, int]) -> None:
    """At 80 columns the footer keeps help, quit, pause, the view, the cursor, zoom, smoothing and the
    scrubber before rerun, csv or compare."""
    app = create_app("skewed_mul", out=tmp_path / "runs", steps=10000, run_factory=scripted(hold=True))
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        footer = app.screen.query_one("Footer")
        await wait_for(pilot, lambda: any(w.region.width for w in footer.query("FooterKey")))
        widgets = [w for w in footer.query("FooterKey") if w.region.width and w.region.right <= size[0]]
        shown = [w.key_display for w in widgets]  # type: ignore[attr-defined]
        for key in ("?", "q", ",", "z", "m", "["):
            assert key in shown, shown
        await pilot.press("q")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@aio
async def test_circuit_phase_markers_do_not_overlap(tmp_path: Path, size: tuple[int, int]) -> None:
    app = create_app("progress_mul", out=tmp_path / "runs", run_factory=PhasesRun)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.data.status == "finished")
        app.query_one("#tabs", TabbedContent).active = "tab-circuit"
        loss = app.query_one("#circuit-loss", Chart)
        await wait_for(pilot, lambda: "restricted" in loss.shown and "G" in _marker_line(loss.shown))
        assert_letters_apart(_marker_line(loss.shown))
        # the status bar carries every phase's step, C and U included
        await wait_for(pilot, lambda: "generalized 5,200" in app.status_bar.shown)
        assert "memorized 400 · C 3,800 · U 4,800 · generalized 5,200" in app.status_bar.shown
        # the cursor put on C's column (`[` does the same at a logged step) hides no letter
        from grok_tui.charts import zoom

        app._set_axis(cursor=zoom.cursor_at(app.axis, float(MAX_STEPS), C))
        await wait_for(pilot, lambda: "▼" in _marker_line(loss.shown))
        assert_letters_apart(_marker_line(loss.shown))
        await pilot.press("q")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@aio
async def test_help_names_the_circuit_view_and_the_phases(tmp_path: Path, scripted, size: tuple[int, int]) -> None:
    app = create_app("skewed_mul", out=tmp_path / "runs", steps=10000, run_factory=scripted(hold=True))
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        rows = {str(row[0]): str(row[1]) for row in zip(*(c._cells for c in help_screen.table.columns), strict=True)}
        assert "Circuit" in rows and "progress probe" in rows["Circuit"]
        for letter, word in (("M", "memorized"), ("C", "circuit"), ("U", "cleanup"), ("G", "generalized")):
            assert rows[letter].startswith(word), rows[letter]
        await pilot.press("escape")
        await pilot.press("q")


@aio
async def test_the_flagship_says_what_it_shows_and_what_to_try_next(tmp_path: Path, scripted) -> None:
    app = create_app("skewed_mul", out=tmp_path / "runs", steps=10000, run_factory=scripted(hold=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.data.step == 10000)

        def shown() -> bool:
            return f"{len(app.data.tokens.rare)} rare tokens" in app.status_bar.shown

        await wait_for(pilot, lambda: "predicted: val stays under 95%" in app.status_bar.shown and shown())
        lines = app.status_bar.shown.split("\n")
        assert len(lines) == 3 and app.status_bar.size.height == 3
        rare = app.data.tokens.rare
        assert rare and f"{len(rare)} rare tokens ▲ lag" in lines[2]  # how many, from the run's own split
        assert "random_mul" in lines[2] and len(lines[2]) <= 80
        # which ones: the Tokens view names them by id beside the ▲ under their bars
        await pilot.press("t")
        bars = app.query_one("#tokens", Chart)
        await wait_for(pilot, lambda: "▲ rare" in bars.shown)
        assert f"▲ rare ({len(rare)}): {' '.join(map(str, rare))}"[:30] in bars.shown
        await pilot.press("q")


def test_a_fork_that_changed_its_settings_shows_no_prediction() -> None:
    """The guide line is the preset's prediction: a fork with an intervention or a changed setting is not the
    preset's run, so it has none (grok_tui/guide.py)."""
    from engine.events import Status
    from grok_tui.rundata import RunData
    from grok_tui.widgets.status_bar import status_text

    d = RunData(label="skewed_mul")
    d.status = Status.RUNNING
    assert status_text(d).plain.split("\n")[2].startswith(" predicted: ")
    d.fork_changes = 1
    assert len(status_text(d).plain.split("\n")) == 2


def test_a_narrow_key_abbreviates_before_it_cuts() -> None:
    """At 80×24 a chart's key keeps every series: title, spaces, then words go before any …."""
    from grok_tui.charts.canvas import Line, _head
    from grok_tui.charts.series import Point

    pts = [Point(0.5, 1.0, 1.0, 1.0)]
    plot = Plot(
        "accuracy", [Line(lb, pts, "cyan", g) for lb, g in (("train", "+"), ("val", "*"), ("val rare", "o"))], 10, True
    )
    assert _head(plot, 60, False).plain == "accuracy  ━ train  ━ val  ━ val rare"
    assert _head(plot, 30, False).plain == "━ train  ━ val  ━ val rare"
    assert _head(plot, 22, False).plain == "━ train ━ val ━ rare"
    assert "…" not in _head(plot, 22, True).plain


def test_the_heat_maps_end_step_is_never_cut() -> None:
    from grok_tui.charts.blocks import render_heat

    frames: list[tuple[int, tuple[float, ...]]] = [(s, (1.0, 2.0, 3.0)) for s in range(0, 7_500, 100)]
    for width in (16, 18, 22, 40):  # 8 to 32 columns of plot
        axis = render_heat("heat", frames, width, 8, True).plain.splitlines()[-1]
        assert axis.rstrip().endswith("7,400"), axis  # never `step 74` or `step 7,4`


def test_the_heat_map_shades_its_cells_in_colour_too() -> None:
    """In colour each cell is a shade glyph as well as a colour: a text capture shows the map, not solid █;
    one large first snapshot does not push every later cell to the bottom of the scale."""
    from grok_tui.charts.blocks import SHADES, render_heat

    p = 12
    frames = [(0, (100.0,) * p)]  # the first steps' large gradients
    frames += [(s, tuple(0.01 if t < 3 else 1.0 + 0.1 * (s % 3) for t in range(p))) for s in range(10, 400, 10)]
    for mono in (False, True):
        rows = render_heat("heat", frames, 40, p + 2, mono).plain.splitlines()[1:-1]
        cells = [row.split("│", 1)[1] for row in rows]
        assert not all(set(c) == {"█"} for c in cells), "\n".join(rows)
        rare, common = cells[0][-10:], cells[-1][-10:]  # tokens 0-2 starve: lighter than the common tokens
        assert max(SHADES.index(ch) for ch in rare) < min(SHADES.index(ch) for ch in common), "\n".join(rows)


def test_the_eta_holds_steady_when_probes_run() -> None:
    """A probe every fifth report halves that window's rate: the ETA stays within 5% of the mean pace's,
    where the engine's windowed steps/s made it swing by half (1m02s -> 1m56s on the flagship)."""
    from grok_tui.rundata import RunData

    d = RunData("run")
    d.status, d.max_steps = "running", 10_000
    wall, etas = 0.0, []
    for i in range(1, 60):
        dt = 2.0 if i % 5 == 0 else 1.0  # 100 steps a second, 50 in a window where a probe ran
        wall += dt
        d.apply(StepsTaken(100 * i, 0, wall, 100 / dt))
        if i > 10:
            etas.append(d.eta_s())
    mean_rate = 100 * 58 / (wall - 1.0)
    assert all(abs(e - (10_000 - 100 * i) / mean_rate) / e < 0.05 for i, e in zip(range(11, 60), etas, strict=True))
    assert max(b / a for a, b in itertools.pairwise(etas)) < 1.05  # never jumps up as the probe runs
