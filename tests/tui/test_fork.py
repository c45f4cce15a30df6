"""`f` forks the run on screen through its form; the compare view then shows parent and fork, F at the fork."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, Static

from engine.rundir.checkpoints import list_kept
from engine.train.run import Run
from grok_tui.app import create_app
from grok_tui.screens.compare import CompareScreen
from grok_tui.screens.fork_form import ForkForm, snap
from grok_tui.widgets.line_chart import LineChart
from tests.conftest import tiny_config
from tests.tui.conftest import aio, painted, wait_for

REAL_RUN_S = 240.0  # a deadline for a real run's progress on a loaded machine (a hang still fails)


def parent_run(root: Path) -> Path:
    run = Run(tiny_config(train__keep_every=20, train__threads=1), root)
    list(run.events())
    return run.dir


def test_snap_takes_the_latest_kept_step_at_or_before() -> None:
    assert snap([20, 40, 60], 45.0) == 40 and snap([20, 40, 60], None) == 60 and snap([20, 40], 5.0) == 20
    assert snap([], 10.0) is None


@aio
async def test_f_forks_at_the_cursor_and_compare_shows_both(tmp_path: Path) -> None:
    parent = parent_run(tmp_path / "runs")
    app = create_app(open_dir=str(parent))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: painted(app))
        await pilot.press("comma", "greater_than_sign", "greater_than_sign", "greater_than_sign")
        want = snap([k.step for k in list_kept(parent)], app.axis.cursor_step(float(app.data.max_steps)))
        assert want is not None  # the cursor sits on a kept checkpoint
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkForm))
        form = app.screen
        assert form.query_one("#fork-step", Input).value == str(want)
        # a key that cannot change mid-run: the engine's one line, inline; the form stays
        await pilot.press(*"data.p=13", "enter")
        assert "cannot change mid-run" in str(form.query_one("#fork-error", Static).render())
        assert app.screen is form
        form.query_one("#fork-sets", Input).value = ""
        await pilot.press(*"optim.lr=3e-3", "tab", *"rescale:3=x2", "enter")
        await wait_for(pilot, lambda: app.screen is app.main_screen and app.data.run_dir != str(parent))
        await wait_for(pilot, lambda: app.data.status == "finished")
        fork = Path(app.data.run_dir)
        s = json.loads((fork / "summary.json").read_text())
        assert s["parent"] == parent.name and s["fork_step"] == want and s["status"] == "finished"
        assert [(e["kind"], e["target"]) for e in s["interventions"]] == [("rescale", "3"), ("set", "optim.lr")]
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await wait_for(pilot, lambda: len(screen.selected_runs()) == 2)
        assert {d.run_dir for _, d in screen.selected_runs()} == {str(fork), str(parent)}
        plot = screen.query_one(LineChart).source()
        assert (float(want), "F") in plot.markers
        assert sum(1 for ln in plot.lines if ln.points) == 2


@aio
async def test_f_on_a_live_run_forks_it_now(tmp_path: Path) -> None:
    """An empty step on a run training in the app: the run stops and checkpoints, and the fork starts there."""
    sets = ["data.p=7", "model.d_embed=8", "train.batch_size=16", "train.eval_every=50", "train.device=cpu"]
    app = create_app("skewed_mul", sets=[*sets, "train.threads=1"], steps=1_000_000, out=tmp_path / "runs")
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.data.step >= 20, timeout=REAL_RUN_S)
        parent = Path(app.data.run_dir)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkForm))
        assert app.screen.query_one("#fork-step", Input).value == ""
        # Set, not typed: the live run's worker thread shares the GIL with the app, so each typed key waits
        # its turn (17 keys took about 30 s on two loaded cores while the parent trained on).
        app.screen.query_one("#fork-sets", Input).value = "optim.lr_ratio=10"
        await pilot.press("enter")  # to the parent's max_steps: wherever it stopped
        forked = lambda: app.screen is app.main_screen and app.data.run_dir not in ("", str(parent))  # noqa: E731
        await wait_for(pilot, forked, timeout=REAL_RUN_S)
        fork = Path(app.data.run_dir)
        at = json.loads((fork / "summary.json").read_text())["fork_step"]
        await wait_for(pilot, lambda: app.data.step > at, timeout=REAL_RUN_S)  # the fork trains on
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, timeout=REAL_RUN_S)
    p, s = json.loads((parent / "summary.json").read_text()), json.loads((fork / "summary.json").read_text())
    assert p["status"] == "interrupted" and s["parent"] == parent.name
    assert s["fork_step"] == p["steps"] >= 20  # forked where the parent stopped
    assert json.loads((fork / "config.json").read_text())["optim"]["lr_ratio"] == 10.0
