"""The training step reads nothing back from the device between its NaN checks (engine/train/loop.py).

On a GPU each such read drains the launch queue (engine/train/gpu/hostsync.py). These count, on the CPU, the
calls that would read back: none in a step of the shuffled or token-weighted samplers, one per
PROGRESS_EVERY steps for the NaN check. Steps are taken on the test's own thread (`_loop`), where the
counting mode is in force; step 0 (its evaluation) and the last step (the final evaluation) are left
out, and each epoch is longer than the run, so no epoch is drawn inside the window.
"""

from __future__ import annotations

import pytest

import engine.train.loop as loop
from engine.config import RunConfig
from engine.train.gpu.hostsync import HostReads
from engine.train.loop import TrainLoop
from engine.train.many import ManyTrainer
from engine.train.trainer import Trainer
from tests.conftest import tiny_config

STEPS = 12


def reads_in_steps(tr: TrainLoop) -> dict[str, int]:
    """The host reads made while steps 1 .. STEPS-1 train (no evaluation is due in them)."""
    mode = HostReads(lambda: 1 <= tr.step <= STEPS - 1)
    with mode:
        for _ in tr._loop():
            pass
    return dict(mode.counts)


def config(sampler: str, seed: int = 0) -> RunConfig:
    return tiny_config(
        train__sampler=sampler, train__batch_size=2, train__max_steps=STEPS, train__eval_every=1000, train__seed=seed
    )


@pytest.mark.parametrize("sampler", ["shuffle", "balanced", "replacement", "balanced_epochs"])
def test_a_step_reads_nothing_back(sampler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop, "PROGRESS_EVERY", 10**9)  # no NaN check inside the window
    tr = Trainer(config(sampler))
    assert tr.steps_per_epoch > STEPS
    assert reads_in_steps(tr) == {}


def test_stacked_members_read_nothing_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop, "PROGRESS_EVERY", 10**9)
    assert reads_in_steps(ManyTrainer([config("shuffle", seed=s) for s in (0, 1)])) == {}


def test_the_nan_check_is_one_read_per_progress_interval() -> None:
    """Steps 1..11 hold one NaN check, at step 10: a single `tolist` of every member's finite flag."""
    assert loop.PROGRESS_EVERY == 10
    assert reads_in_steps(Trainer(config("shuffle"))) == {"tolist": 1}


def test_the_gradient_sampler_reads_one_thing_back_per_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its next draw depends on this step's ∇E (eq. 19): the row norms are the one copy to the host; the
    batch's tokens come from its own host-side draw (its bincounts are of host tensors)."""
    monkeypatch.setattr(loop, "PROGRESS_EVERY", 10**9)
    reads = reads_in_steps(Trainer(config("gradient")))
    assert reads.pop("cpu") == STEPS - 1
    assert set(reads) <= {"bincount"}
