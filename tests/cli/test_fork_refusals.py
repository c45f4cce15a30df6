"""`grok fork`'s refusals: any bad input is one line and exit 2 and writes nothing; an intervention on an
empty token set is refused; a prepared fork says so; a fork of a run still training says which step it took."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.rundir import RunLock
from tests.cli.conftest import DATA, grok

pytestmark = pytest.mark.xdist_group("fork_refusals")


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    sets = ("--set", "train.keep_every=20", "--set", "train.threads=1")
    r = grok("run", "-c", str(DATA / "tiny.toml"), *sets, "--out", str(out), "-q")
    assert r.returncode == 0, r.stderr
    return next(out.iterdir())


def _tree(root: Path) -> set[tuple[str, float]]:
    return {(str(p.relative_to(root)), p.stat().st_mtime) for p in root.rglob("*")}


BAD = {
    "no such run": ("{missing}",),
    "not a run": ("{root}",),
    "a step with no checkpoint": ("{parent}", "--at", "30"),
    "a negative step": ("{parent}", "--at", "-20"),
    "an unknown key": ("{parent}", "--set", "optim.nope=1"),
    "a bad value": ("{parent}", "--set", "optim.lr=fast"),
    "a key that cannot change": ("{parent}", "--set", "data.p=13"),
    "a malformed intervention": ("{parent}", "-i", "rescale"),
    "an unknown intervention": ("{parent}", "-i", "bend:3=x2"),
    "a token past p": ("{parent}", "-i", "rescale:99=x2"),
    "an empty token set": ("{parent}", "--at", "40", "-i", "rescale:targets=ring"),
    "an empty absent set": ("{parent}", "--at", "40", "-i", "reset:absent"),
    "steps not past the fork": ("{parent}", "--at", "40", "--steps", "40"),
    "an out that is a file": ("{parent}", "--out", "{file}"),
    "a copy from no run": ("{parent}", "-i", "copy:3={missing}"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_exit_2_and_writes_nothing(parent: Path, tmp_path: Path, case: str) -> None:
    (tmp_path / "a-file").write_text("x")
    names = {"parent": parent, "missing": tmp_path / "missing", "root": tmp_path, "file": tmp_path / "a-file"}
    args = [a.format(**names) for a in BAD[case]]
    before, siblings = _tree(parent.parent), _tree(tmp_path)
    r = grok("fork", *args, "-q", env={"COLUMNS": "80"})
    assert r.returncode == 2, (case, r.stdout, r.stderr)
    lines = r.stderr.splitlines()  # one message, folded to 80 columns
    assert lines[0].startswith("error:") and all(ln.startswith("  ") for ln in lines[1:]), (case, r.stderr)
    assert all(len(line) <= 80 for line in lines), r.stderr
    assert _tree(parent.parent) == before and _tree(tmp_path) == siblings, case  # nothing written anywhere


def test_an_empty_token_set_names_the_sets(parent: Path) -> None:
    r = grok("fork", str(parent), "--at", "40", "-i", "rescale:targets=ring")
    assert r.returncode == 2
    assert "targets names no token of this run (targets 0, rare" in r.stderr, r.stderr


def test_a_prepared_fork_shows_prepared_not_interrupted(parent: Path, tmp_path: Path) -> None:
    r = grok("fork", str(parent), "--at", "40", "--prepare", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    fork = next(tmp_path.iterdir())
    assert json.loads((fork / "summary.json").read_text())["status"] == "prepared"
    show = grok("show", str(fork))
    assert show.returncode == 0, show.stderr
    assert "device - (not trained yet)" in show.stdout and "device ?" not in show.stdout
    assert "status            prepared" in show.stdout and "not trained yet; train it with" in show.stdout
    assert "interrupted" not in show.stdout
    assert "prepared" in grok("ls", str(tmp_path)).stdout
    run = grok("run", "--resume", str(fork), "-q")
    assert run.returncode == 0, run.stderr
    assert json.loads((fork / "summary.json").read_text())["status"] == "finished"


def test_forking_a_run_still_training_says_which_checkpoint_it_took(parent: Path, tmp_path: Path) -> None:
    lock = RunLock(parent).acquire()  # as the run's own process holds it while it trains
    try:
        r = grok("fork", str(parent), "--steps", "100", "--prepare", "--out", str(tmp_path))
    finally:
        lock.release()
    assert r.returncode == 0, r.stderr
    assert f"note: {parent} is still training (pid {os.getpid()}); forked its checkpoint at step 60" in r.stdout


def test_plot_of_parent_and_fork_shows_the_markers_of_both(parent: Path, tmp_path: Path) -> None:
    from grok_tui.commands.plot import charts, run_chart

    r = grok("fork", str(parent), "--at", "40", "--steps", "80", "-q", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    fork = next(tmp_path.iterdir())
    (chart,) = charts([str(parent), str(fork)], ["val_loss"])
    want = set(run_chart(parent, ["val_loss"], True).markers) | set(run_chart(fork, ["val_loss"], True).markers)
    assert (40.0, "F") in want and set(chart.markers) == want
    plot = grok("plot", str(parent), str(fork), "-m", "val_loss", "--linear-x")
    assert plot.returncode == 0, plot.stderr
    lines = plot.stdout.splitlines()
    top = next(i for i, ln in enumerate(lines) if "┌" in ln)  # the key above the frame names F, as the top row draws it
    assert "F" in lines[top + 1] and "│ F " in " ".join(lines[:top])
