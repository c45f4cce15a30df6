"""Members that start from their own checkpoint stack (engine/sweep/batched.py): forks and resumed members,
each equal to its solo continuation (`Run.from_checkpoint`), whether they share an optimizer or not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.rundir import read_config, read_metrics, read_summary
from engine.sweep.batched import plan, run_batch
from engine.sweep.member import MemberSpec
from engine.train.fork import fork_run
from engine.train.run import Run
from tests.conftest import tiny_config
from tests.engine.test_batched_features import close
from tests.engine.test_fork import finish, trained

STARVED = {"data__starve_k": 2, "optim__weight_decay": 0.1}


def _forks(tmp_path: Path, changes: list[dict[str, str]]) -> list[Path]:
    """Two parents (seeds 0, 1) trained to 60 with checkpoints kept at 20; a fork of each at 20."""
    out = []
    for seed, sets in enumerate(changes):
        parent = trained(tmp_path / f"p{seed}", train__seed=seed, **STARVED)
        out.append(fork_run(parent, at=20, sets=sets, out=tmp_path / f"f{seed}"))
    return out


def _spec(d: Path, i: int) -> MemberSpec:
    return MemberSpec(f"m{i}", read_config(d), str(d), has_checkpoint=True, start_step=read_summary(d).steps)


def _assert_batch_is_solo(forks: list[Path], tmp_path: Path) -> None:
    solos = [Path(shutil.copytree(d, tmp_path / f"solo{i}")) for i, d in enumerate(forks)]
    specs = [_spec(d, i) for i, d in enumerate(forks)]
    assert plan(specs, stack=True) == [specs]  # one stack: both start at 20
    rows = run_batch(specs, None, lambda: False)
    assert [r["status"] for r in rows] == ["finished", "finished"]
    for d, s in zip(forks, solos, strict=True):
        finish(s)
        got, want = read_metrics(d), read_metrics(s)
        assert [r["step"] for r in got] == [r["step"] for r in want]  # the parent's rows to 20, then its own
        for g, w in zip(got, want, strict=True):
            for k in ("train_loss", "val_loss", "val_acc", "train_acc"):
                assert close(float(g[k]), float(w[k])), (g["step"], k, g[k], w[k])
        assert read_summary(d).status == "finished" and read_summary(d).steps == read_summary(s).steps


@pytest.mark.parametrize(
    "changes",
    [
        [{"optim.lr": "2e-3"}, {"optim.lr": "2e-3"}],  # equal settings: one optimizer, each fork's moments its row
        [{"optim.decay_sets": "E[targets]=0"}, {"optim.lazy_rows": "true"}],  # an optimizer each
    ],
)
def test_forks_stack_and_continue_as_alone(tmp_path: Path, changes: list[dict[str, str]]) -> None:
    _assert_batch_is_solo(_forks(tmp_path, changes), tmp_path)


def test_interrupted_members_resume_stacked(tmp_path: Path) -> None:
    """A stacked batch stopped at its first progress notice resumes stacked from each member's checkpoint."""
    specs = [MemberSpec(f"m{s}", tiny_config(train__seed=s, **STARVED), str(tmp_path / f"m{s}")) for s in (0, 1)]
    run_batch(specs, lambda ev: None, lambda: True)
    dirs = [Path(s.run_dir) for s in specs]
    assert [read_summary(d).status for d in dirs] == ["interrupted", "interrupted"]
    steps = read_summary(dirs[0]).steps
    assert steps is not None and steps == read_summary(dirs[1]).steps and steps > 0
    _assert_batch_is_solo(dirs, tmp_path)


def test_a_member_whose_checkpoint_step_is_unknown_trains_alone(tmp_path: Path) -> None:
    forks = _forks(tmp_path, [{"optim.lr": "2e-3"}, {"optim.lr": "2e-3"}])
    specs = [_spec(forks[0], 0), MemberSpec("m1", read_config(forks[1]), str(forks[1]), True, None)]
    assert plan(specs, stack=True) == [[specs[0]], [specs[1]]]
    assert Run.from_checkpoint(forks[1]).trainer.step == 20
