"""engine/records/run.py: a run directory read back as the engine computed it, for a finished, a live and a
killed run; and the faces (ls, show, tokens, the TUI's --open) taking their facts from that record."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.events import EvalLogged, RunStarted, TokenSets
from engine.records.run import read_run
from engine.task.metrics import split_tokens
from engine.train.phases import Phases
from engine.train.run import Run
from tests.conftest import tiny_config

# two starved target tokens with one training pair each: the rare, absent and target sets all non-trivial
SPLIT = {"data__starve_k": 2, "data__starve_m": 1, "probe__rare_k": 3, "train__eval_every": 10}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = Run(tiny_config(**SPLIT), tmp_path_factory.mktemp("runs"))
    for _ in run.events():
        pass
    assert run.status == "finished"
    return run.dir


def summary(d: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((d / "summary.json").read_text())
    return doc


def killed_copy(finished: Path, tmp_path: Path, drop: tuple[str, ...] = ()) -> Path:
    """The finished run as a SIGKILL leaves it: its rows, and the summary its start wrote (status running)."""
    d = Path(shutil.copytree(finished, tmp_path / finished.name))
    start = {
        k: v for k, v in summary(finished).items() if k in ("steps", "device", "preset", "seed", *TokenSets.FIELDS)
    }
    for k in drop:
        start.pop(k, None)
    (d / "summary.json").write_text(json.dumps({**start, "status": "running", "steps": 0}))
    return d


def test_a_finished_run_reads_back_with_its_config_phases_and_token_sets(finished: Path) -> None:
    rec = read_run(finished)
    s = summary(finished)
    assert rec.config == tiny_config(**SPLIT) and rec.status == "finished" and rec.step == 60
    assert rec.phases == Phases.of(s)
    assert (rec.phases.memorized_step, rec.phases.generalized_step) == (s["memorized_step"], s["generalized_step"])
    assert rec.phases.delay == s["grokking_delay"]
    assert list(rec.tokens.rare) == s["rare_tokens"] and list(rec.tokens.target) == s["target_tokens"]
    assert len(rec.tokens.target) == 2 and all(rec.tokens.train_pairs[t] <= 1 for t in rec.tokens.target)
    # what the evaluation logged is what the split, recomputed from the config alone, gives
    assert rec.tokens == split_tokens(rec.config)


def test_a_killed_run_takes_its_phases_from_its_rows_by_its_own_rule(finished: Path, tmp_path: Path) -> None:
    rec, done = read_run(killed_copy(finished, tmp_path)), read_run(finished)
    assert rec.status == "dead" and rec.step == 60
    steps = ("memorized_step", "generalized_step", "early_stop_step")
    assert [getattr(rec.phases, k) for k in steps] == [getattr(done.phases, k) for k in steps]
    assert rec.phases.final_val_acc == pytest.approx(done.phases.final_val_acc, rel=1e-6)
    assert rec.tokens == done.tokens  # from the summary the run's start wrote


def test_a_run_that_did_not_log_its_token_sets_gets_its_splits(finished: Path, tmp_path: Path) -> None:
    rec = read_run(killed_copy(finished, tmp_path, drop=TokenSets.FIELDS))
    assert rec.tokens == read_run(finished).tokens


def test_a_live_run_reads_back_with_the_streams_facts(tmp_path: Path) -> None:
    run = Run(tiny_config(**SPLIT), tmp_path)
    started: RunStarted | None = None
    seen = []
    for ev in run.events():
        if isinstance(ev, RunStarted):
            started = ev
        if isinstance(ev, EvalLogged) and ev.step == 40:
            rec = read_run(run.dir)  # this process holds the lock: the run is live
            seen.append((rec.status, rec.tokens, rec.phases.memorized_step, rec.config))
            want = (ev.memorized_step, ev.generalized_step)
            assert (rec.phases.memorized_step, rec.phases.generalized_step) == want
    assert started is not None and len(seen) == 1
    status, tokens, _, config = seen[0]
    assert status == "running" and tokens == started.tokens and config == started.config


def test_the_faces_take_the_records_facts(finished: Path, tmp_path: Path) -> None:
    from grok_tui.commands.ls import run_entry
    from grok_tui.rundata import load_run
    from grok_tui.token_facts import token_table

    rec, s = read_run(finished), summary(finished)
    e = run_entry(rec)
    assert (e["memorized_step"], e["generalized_step"], e["grokking_delay"]) == (
        s["memorized_step"],
        s["generalized_step"],
        s["grokking_delay"],
    )
    assert e["max_steps"] == 60
    rows, _, _ = token_table(finished)
    roles = {r["token"]: r["role"] for r in rows}
    assert {t for t, r in roles.items() if r.startswith("rare")} == set(rec.tokens.rare) - set(rec.tokens.absent)
    assert {t for t, r in roles.items() if r.endswith("target")} == set(rec.tokens.target)
    assert {r["token"]: r["train_pairs"] for r in rows} == dict(enumerate(rec.tokens.train_pairs))
    data = load_run(finished)
    assert data.config == rec.config and data.tokens == rec.tokens and data.phases == rec.phases
    dead = load_run(killed_copy(finished, tmp_path))
    assert dead.status == "dead" and dead.phases.generalized_step == rec.phases.generalized_step
    assert math.isfinite(dead.phases.best_val_acc)
