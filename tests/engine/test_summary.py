"""engine/summary.py and engine/rundir/summary.py: summary.json as one frozen RunSummary, written and read by the same
code."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from engine.config import ConfigError
from engine.records.run import read_run
from engine.rundir.summary import RESULTS_FIELDS, read_summary, write_summary
from engine.summary import RunSummary
from engine.train.phases import Phases
from engine.train.run import Run
from tests.conftest import tiny_config


def test_a_run_writes_what_its_reader_gives_back(tmp_path: Path) -> None:
    run = Run(tiny_config(), tmp_path)
    for _ in run.events():
        pass
    s = read_summary(run.dir)
    assert s.status == "finished" and s.steps == 60 and s.seed == 0 and s.learned_acc == 0.9
    assert s == RunSummary.written(run.summary)  # the engine's fields, as written
    assert read_summary(run.dir).doc() == json.loads((run.dir / "summary.json").read_text())


def test_an_old_summary_reads_with_its_missing_fields_none(tmp_path: Path) -> None:
    """A summary.json from before most fields were written: the rest read as None, the run as before."""
    run = Run(tiny_config(), tmp_path)
    for _ in run.events():
        pass
    old = {"status": "finished", "steps": 60, "memorized_step": 20, "final_val_acc": 0.5}
    (run.dir / "summary.json").write_text(json.dumps(old))
    s = read_summary(run.dir)
    assert (s.status, s.steps, s.memorized_step, s.final_val_acc) == ("finished", 60, 20, 0.5)
    assert s.learned_step is None and s.rare_tokens is None and s.wall_s is None and s.extra == {}
    rec = read_run(run.dir)
    assert rec.phases == Phases(memorized_step=20, final_val_acc=0.5) and rec.tokens.train_pairs  # from the split


def test_a_key_this_engine_does_not_know_is_kept_and_written_back(tmp_path: Path) -> None:
    s = RunSummary.of({"status": "finished", "steps": 3, "from_a_newer_engine": [1, 2]})
    assert s.extra == {"from_a_newer_engine": [1, 2]}
    write_summary(tmp_path, s)
    assert read_summary(tmp_path) == s and json.loads((tmp_path / "summary.json").read_text())["from_a_newer_engine"]


def test_a_non_finite_number_is_written_as_unknown() -> None:
    """JSON has no NaN: a NaN accuracy (no evaluation yet) is null where its field allows null, else left out."""
    doc = RunSummary.written({"status": "interrupted", "final_val_acc": math.nan, "wall_s": math.nan}).doc()
    assert doc["final_val_acc"] is None and "wall_s" not in doc
    assert doc["memorized_step"] is None and "device" not in doc  # null means "not reached", not "unknown field"


def test_a_bad_field_is_refused_by_name_however_the_summary_is_made(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^steps: must be a whole number ≥ 0, found -1$"):
        RunSummary(steps=-1)
    with pytest.raises(ValueError, match=r"^status: must be one of .*, found None$"):
        RunSummary.of({"status": None})  # a null where the field allows none
    (tmp_path / "summary.json").write_text('{"final_val_acc": 1.5}')
    with pytest.raises(ConfigError, match=r"summary.json: final_val_acc: must be a number in \[0, 1\] or null"):
        read_summary(tmp_path)


def test_results_rows_carry_the_fields_marked_for_them_in_results_csv_order() -> None:
    assert RESULTS_FIELDS == (
        "status",
        "steps",
        "max_steps",
        "memorized_step",
        "generalized_step",
        "grokking_delay",
        "final_train_acc",
        "final_val_acc",
        "best_val_acc",
        "wall_s",
    )
    every = [f.name for f in dataclasses.fields(RunSummary)]
    assert every[: len(RESULTS_FIELDS)] == list(RESULTS_FIELDS) and every[-1] == "extra"


def test_every_status_a_face_shows_is_a_status() -> None:
    """The statuses are one StrEnum (engine/events.py): what summary.json may hold, and what the faces add."""
    from engine.events import Status
    from engine.rundir.schema import ENDED
    from engine.summary import STATUSES
    from grok_tui.widgets.status_bar import STATUS_STYLE

    assert set(STATUS_STYLE) == set(Status)
    assert set(STATUSES) < set(Status) and {Status.DEAD, Status.STARTING, Status.IDLE}.isdisjoint(STATUSES)
    assert Status.PREPARED in STATUSES and set(ENDED) == {Status.FINISHED, Status.DIVERGED}
    finished: str = Status.FINISHED  # a StrEnum is a str: it reads and prints as its text
    assert finished == "finished" and f"{Status.DEAD}" == "dead"
