"""Logs that cannot lie: a closed run's metrics.csv or tokens.csv cut mid-line, past its summary or ending
before a finished run's last step, and a group's results.csv cut mid-row or missing an ended member, are
one line naming the file and exit 2 for every command that would print numbers from them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.config import ConfigError
from engine.records.group import read_group
from engine.records.run import read_run
from engine.rundir import truncate_csv
from tests.cli.conftest import DATA
from tests.conftest import grok

pytestmark = pytest.mark.xdist_group("log_faults")
READERS = (("show",), ("plot",), ("export", "-o", "out.csv"), ("tokens",))


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    r = grok("run", "--config", str(DATA / "tiny.toml"), "-q", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return next(out.iterdir())


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _cut_mid_line(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: data.rfind(b"\n", 0, len(data) - 1) + 5])  # the last row's first 4 bytes


def _drop_last_step(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    last = lines[-1].split(",")[0]
    path.write_text("".join(ln for ln in lines if ln.split(",")[0] != last))


def _past_summary(run: Path) -> None:
    s = json.loads((run / "summary.json").read_text())
    s["steps"] = 40
    (run / "summary.json").write_text(json.dumps(s))


CASES = {
    "cut": (_cut_mid_line, "the last line is cut mid-row"),
    "short": (_drop_last_step, "ends at step 40, before the finished run's last step 60"),
}


@pytest.mark.parametrize("log", ["metrics.csv", "tokens.csv"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_closed_runs_lying_log_is_one_line(finished: Path, tmp_path: Path, log: str, case: str) -> None:
    run = _copy(finished, tmp_path / "run")
    fault, words = CASES[case]
    fault(run / log)
    with pytest.raises(ConfigError, match=f"{log}: .*{words.split(',')[0]}"):
        read_run(run)
    for cmd in READERS:
        r = grok(cmd[0], str(run), *cmd[1:], cwd=tmp_path)
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and log in lines[0] and words.split(",")[0] in lines[0], (cmd, r.stderr)
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("log", ["metrics.csv", "tokens.csv"])
def test_a_step_past_the_summary_is_named(finished: Path, tmp_path: Path, log: str) -> None:
    run = _copy(finished, tmp_path / "run")
    _past_summary(run)
    s = json.loads((run / "summary.json").read_text())
    s["status"] = "interrupted"  # an interrupted run may end anywhere, but not past its summary
    (run / "summary.json").write_text(json.dumps(s))
    if log == "tokens.csv":  # metrics.csv within the summary: the fault is tokens.csv's alone
        truncate_csv(run / "metrics.csv", 40)
    with pytest.raises(ConfigError, match=f"{log}: step 60 is past the summary's last step 40"):
        read_run(run)
    r = grok("show", str(run))
    assert r.returncode == 2 and f"{log}: step 60 is past" in r.stderr


def test_a_run_still_running_or_dead_may_end_in_a_half_written_line(finished: Path, tmp_path: Path) -> None:
    """A summary that still says running (its writer died, or a live one): read up to the torn line."""
    run = _copy(finished, tmp_path / "run")
    s = json.loads((run / "summary.json").read_text())
    s.update(status="running", steps=20)
    (run / "summary.json").write_text(json.dumps(s))
    _cut_mid_line(run / "metrics.csv")
    rec = read_run(run)
    assert rec.status == "dead" and [r["step"] for r in rec.rows] == [0.0, 20.0, 40.0]
    assert grok("show", str(run)).returncode == 0


def test_an_interrupted_run_may_end_before_its_budget(finished: Path, tmp_path: Path) -> None:
    run = _copy(finished, tmp_path / "run")
    truncate_csv(run / "metrics.csv", 40)
    truncate_csv(run / "tokens.csv", 40)
    s = json.loads((run / "summary.json").read_text())
    s.update(status="interrupted", steps=40)
    (run / "summary.json").write_text(json.dumps(s))
    assert read_run(run).step == 40


@pytest.fixture(scope="module")
def group(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep")
    r = grok("sweep", "--config", str(DATA / "tiny_sweep.toml"), "--seeds", "1", "-q", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return next(d for d in out.iterdir() if (d / "group.json").is_file())


def test_a_results_row_cut_mid_line_is_named(group: Path, tmp_path: Path) -> None:
    g = _copy(group, tmp_path / "g")
    _cut_mid_line(g / "results.csv")
    with pytest.raises(ConfigError, match=r"results\.csv: the last row is cut mid-line"):
        read_group(g)
    for cmd in (("report",), ("plot",), ("export", "-o", "out.csv")):
        r = grok(cmd[0], str(g), *cmd[1:], cwd=tmp_path)
        assert r.returncode == 2 and "results.csv: the last row is cut" in r.stderr, (cmd, r.stderr)


def test_an_ended_member_without_a_row_is_named(group: Path, tmp_path: Path) -> None:
    g = _copy(group, tmp_path / "g")
    lines = (g / "results.csv").read_text().splitlines(keepends=True)
    member = lines[-1].split(",")[lines[0].split(",").index("member")]
    (g / "results.csv").write_text("".join(lines[:-1]))
    later = (g / "results.csv").stat().st_mtime + 1  # written after every member ended
    os.utime(g / "results.csv", (later, later))
    with pytest.raises(ConfigError, match=f"results.csv: member {member} ended \\(finished\\) but has no row"):
        read_group(g)
    r = grok("report", str(g))
    assert r.returncode == 2 and f"member {member} ended" in r.stderr


def test_a_member_that_ended_after_results_was_written_is_not_yet_a_lie(group: Path, tmp_path: Path) -> None:
    """A sweep writes a member's row just after the member ends: a reader in between sees no row yet."""
    g = _copy(group, tmp_path / "g")
    lines = (g / "results.csv").read_text().splitlines(keepends=True)
    (g / "results.csv").write_text("".join(lines[:-1]))
    earlier = min(p.stat().st_mtime for p in g.glob("*/summary.json")) - 10
    os.utime(g / "results.csv", (earlier, earlier))
    read_group(g)


# --- the run writer's guarantees (docs/ENGINE.md "What the run writer guarantees"), each broken once -----


def _rewrite(path: Path, change: Any) -> None:
    """`change(lines)` on the file's lines (newlines kept), written back."""
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(change(lines)))


def _header(old: str, new: str) -> Any:
    return lambda lines: [lines[0].replace(old, new, 1), *lines[1:]]


def _cell(row: int, value: str) -> Any:
    return lambda lines: [*lines[:row], value + lines[row][lines[row].index(",") :], *lines[row + 1 :]]


GUARANTEES = {
    "a column named twice": ("metrics.csv", _header(",lr,", ",val_acc,"), "the header names column val_acc twice"),
    "step first": ("metrics.csv", _header("step,epoch", "epoch,step"), "the header's first column is epoch, not step"),
    "whole steps": ("metrics.csv", _cell(2, "20.5"), "row 3: step '20.5' is not a whole number ≥ 0"),
    "steps increase": ("metrics.csv", lambda ls: [ls[0], ls[2], ls[1], *ls[3:]], "row 3: step 0 comes after step 20"),
    "one row a step": ("metrics.csv", lambda ls: [*ls[:3], ls[2], *ls[3:]], "row 4: step 20 repeats"),
    "token rows in step order": ("tokens.csv", lambda ls: [ls[0], *ls[:0:-1]], "step 40 comes after step 60"),
    "within the budget": ("config.json", None, "steps 60 is past config.json's train.max_steps 40"),
}


@pytest.mark.parametrize("broken", sorted(GUARANTEES))
def test_each_guarantee_broken_is_one_line_naming_the_file(finished: Path, tmp_path: Path, broken: str) -> None:
    """show, plot, export and tokens exit 2 with one line naming the file and the guarantee; `grok ls` lists the
    run as unreadable with that line after its table; the same log of a live run is read (its writer's)."""
    run = _copy(finished, tmp_path / "runs" / "run")
    name, change, words = GUARANTEES[broken]
    if change is None:
        cfg = json.loads((run / "config.json").read_text())
        cfg["train"]["max_steps"] = 40
        (run / "config.json").write_text(json.dumps(cfg))
        name = "summary.json"
    else:
        _rewrite(run / name, change)
    with pytest.raises(ConfigError, match=f"{name}: .*{words[:20]}"):
        read_run(run)
    for cmd in READERS:
        r = grok(cmd[0], str(run), *cmd[1:], cwd=tmp_path)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and name in lines[0] and words in lines[0], (cmd, r.stderr)
    ls = grok("ls", str(tmp_path / "runs"))
    assert ls.returncode == 0 and "unreadable" in ls.stdout and words in " ".join(ls.stdout.split()), ls.stdout
    s = json.loads((run / "summary.json").read_text())
    s.update(status="running")  # a writer that died: not closed, read as far as it goes
    (run / "summary.json").write_text(json.dumps(s))
    read_run(run)
