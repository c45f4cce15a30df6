"""Run directories and bit-for-bit resume on the CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.events import StepsTaken
from engine.train.run import Run
from tests.conftest import logged_rows as metrics
from tests.conftest import logged_tokens as tokens
from tests.conftest import tiny_config


def test_run_directory_contents(tmp_path: Path) -> None:
    run = Run(tiny_config(), tmp_path)
    list(run.events())
    d = run.dir
    assert d.parent == tmp_path and d.name.endswith("-tiny-s0")
    for name in ("config.json", "metrics.csv", "tokens.csv", "summary.json", "checkpoint.pt"):
        assert (d / name).exists(), name
    cfg = json.loads((d / "config.json").read_text())
    assert cfg["data"]["p"] == 11 and "torch" in cfg["_meta"]["versions"] and cfg["_meta"]["device"] == "cpu"
    s = json.loads((d / "summary.json").read_text())
    for k in (
        "status",
        "steps",
        "wall_s",
        "steps_per_s",
        "device",
        "preset",
        "seed",
        "memorized_step",
        "generalized_step",
        "grokking_delay",
        "final_train_acc",
        "final_val_acc",
        "best_val_acc",
    ):
        assert k in s, k
    assert s["status"] == "finished" and s["steps"] == 60
    header = (d / "metrics.csv").read_text().splitlines()[0].split(",")
    assert header[:10] == [
        "step",
        "epoch",
        "wall_s",
        "train_loss",
        "train_acc",
        "val_loss",
        "val_acc",
        "lr",
        "lr_embed",
        "lr_ratio",
    ]
    toks = tokens(d)
    assert toks[0][:3] == ["step", "token", "updates"] and len(toks) == 1 + 4 * 13


def _interrupted_then_resumed(tmp_path: Path, stop_at: int, **over) -> tuple[Path, Path]:
    full = Run(tiny_config(train__max_steps=100, **over), tmp_path / "a")
    list(full.events())
    part = Run(tiny_config(train__max_steps=100, **over), tmp_path / "b")
    for ev in part.events():
        if isinstance(ev, StepsTaken) and ev.step == stop_at:
            part.stop("interrupted")
    assert part.status == "interrupted"
    assert json.loads((part.dir / "summary.json").read_text())["status"] == "interrupted"
    resumed = Run.from_checkpoint(part.dir)
    list(resumed.events())
    assert resumed.status == "finished"
    return full.dir, part.dir


@pytest.mark.parametrize("kind", ["mlp_embed", "transformer"])
def test_resume_is_bit_for_bit(tmp_path: Path, threads: int, kind: str) -> None:
    """A run stopped and resumed logs the rows of the uninterrupted run, bit for bit (at 1 and 2 threads)."""
    a, b = _interrupted_then_resumed(tmp_path, stop_at=50, model__kind=kind, model__d_mlp=32)
    # No row at the stop (step 50 is between evaluations): the resumed log is the uninterrupted one.
    assert metrics(a) == metrics(b)
    assert [r["step"] for r in metrics(b)] == ["0", "20", "40", "60", "80", "100"]
    assert tokens(a) == tokens(b)


def test_resume_bit_for_bit_with_gradient_sampler_and_adaptive_ratio(tmp_path: Path, threads: int) -> None:
    a, b = _interrupted_then_resumed(
        tmp_path, stop_at=30, train__sampler="gradient", optim__adaptive=True, optim__adaptive_every=10
    )
    assert metrics(a) == metrics(b)


def test_resume_extends_a_finished_run(tmp_path: Path) -> None:
    run = Run(tiny_config(train__max_steps=40), tmp_path)
    list(run.events())
    longer = Run.from_checkpoint(run.dir, max_steps=80)
    list(longer.events())
    ref = Run(tiny_config(train__max_steps=80), tmp_path / "ref")
    list(ref.events())
    assert metrics(longer.dir) == metrics(ref.dir)


def test_a_log_added_to_the_run_file_table_alone_is_truncated_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """engine/rundir/files.py's table is what resume reads: a new row log listed there (and nowhere else) is cut
    back to the checkpoint's step, while a CSV the table does not list is left as it is."""
    from engine.rundir import files as runfiles

    run = Run(tiny_config(train__max_steps=40), tmp_path)
    list(run.events())  # the checkpoint stands at step 40
    rows = "step,x\n" + "".join(f"{s},{s / 10}\n" for s in (0, 20, 40, 60, 80))
    for name in ("probe_new.csv", "unlisted.csv"):
        (run.dir / name).write_text(rows)
    monkeypatch.setattr(runfiles, "LOGS", (*runfiles.LOGS, runfiles.RunFile("probe_new.csv", ("step", "x"))))
    longer = Run.from_checkpoint(run.dir, max_steps=80)
    next(iter(longer.events()))  # RunStarted: the resume has truncated its logs
    longer.stop()
    list(longer.events())
    assert (run.dir / "probe_new.csv").read_text().splitlines() == ["step,x", "0,0.0", "20,2.0", "40,4.0"]
    assert (run.dir / "unlisted.csv").read_text() == rows
