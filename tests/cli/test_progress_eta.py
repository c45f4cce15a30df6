"""`grok run`'s progress (plain lines and the rich bar) gives the ETA at the mean pace, as the lab does: a
window where a probe ran does not swing it."""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Iterator

from engine.config import RunConfig
from engine.events import EvalLogged, Event, RunStarted, StepsTaken
from grok_tui.progress import PlainProgress, RichProgress
from tests.conftest import tiny_config


def _events(cfg: RunConfig) -> Iterator[Event]:  # 100 steps a second, 50 in every fifth window (a probe ran)
    yield RunStarted(cfg, "cpu", 10, 10, 13, (1,) * 13, 0, 10_000, ("step", "train_acc", "val_acc", "train_loss"))
    wall = 0.0
    for i in range(1, 40):
        dt = 2.0 if i % 5 == 0 else 1.0
        wall += dt
        yield StepsTaken(100 * i, 0, wall, 100 / dt)
        yield EvalLogged(100 * i, {"step": 100 * i, "train_acc": 0.5, "val_acc": 0.1, "train_loss": 1.0})


def _seconds(eta: str) -> int:
    m, s = re.fullmatch(r"(\d+)m(\d+)s", eta).groups()  # type: ignore[union-attr]
    return 60 * int(m) + int(s)


def test_plain_and_rich_progress_eta_hold_steady() -> None:
    cfg = tiny_config()
    out = io.StringIO()
    plain = PlainProgress(every=1, stream=out)
    for ev in _events(cfg):
        plain.handle(ev)
    etas = [_seconds(m) for m in re.findall(r"ETA (\d+m\d+s)", out.getvalue())][10:]
    # a probe's window moves the mean pace a little (never 5%), not the rate by half as the engine's steps/s
    assert etas and max(b / a for a, b in itertools.pairwise(etas)) < 1.05, etas
    rich = RichProgress()
    rich.progress.console.file = io.StringIO()  # off the terminal
    try:
        for ev in _events(cfg):
            rich.handle(ev)
        task = rich.progress.tasks[0]
        assert task.fields["eta"] == re.findall(r"ETA (\d+m\d+s)", out.getvalue())[-1]
    finally:
        rich.close()
