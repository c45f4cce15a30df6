"""engine/records/paper.py: the busy share and wall time a paper record gives, from its segments."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.records.paper import Paper, render, sweep_figures
from engine.rundir import read_paper_doc, write_paper_doc, write_results
from tests.cli.test_sweep_paper import valid_record


def test_busy_share_is_cpu_over_wall_times_cores(tmp_path: Path) -> None:
    doc = valid_record()
    seg = doc["sweeps"][0]["segments"][0]
    doc["sweeps"][0]["segments"].append(dict(seg, wall_s=60.0, cpu_s=30.0, cores=4))
    killed = dict(seg, end=None, wall_s=None, cpu_s=None, cpu_self_s=None, cpu_workers_s=None, exit=None)
    doc["sweeps"][0]["segments"].append(killed)  # its process died before writing an end
    write_paper_doc(tmp_path, doc)
    assert read_paper_doc(tmp_path) == doc
    ended, pending = (sweep_figures(s) for s in Paper.open(tmp_path).sweeps)
    assert (ended.segments, ended.unended) == (3, 1)
    assert ended.wall_s == pytest.approx(160.0, rel=1e-12)
    assert ended.cpu_s == pytest.approx(180.0, rel=1e-12)
    assert ended.busy == pytest.approx(180.0 / (100.0 * 2 + 60.0 * 4), rel=1e-12)
    assert pending.busy is None and pending.wall_s == 0
    text = render(Paper.open(tmp_path))
    assert "1 segment(s) have no end (their process was killed): not counted" in text
    assert f"= {180 / 440:.0%}" in text


def test_a_sweep_that_ended_with_failed_members_is_pointed_out(tmp_path: Path) -> None:
    write_paper_doc(tmp_path, valid_record())
    (tmp_path / "g1").mkdir()
    write_results(tmp_path / "g1", ["member", "status"], [{"member": "m000", "status": "failed"}])
    text = render(Paper.open(tmp_path))
    assert f"fig2_embeddings ended with failed members: `grok sweep --resume {tmp_path / 'g1'}`" in text
    write_results(tmp_path / "g1", ["member", "status"], [{"member": "m000", "status": "finished"}])
    assert "failed" not in render(Paper.open(tmp_path))  # rerun with the group's resume: nothing to say


def test_the_source_commit_is_this_checkouts_head() -> None:
    import re
    import subprocess

    from engine.records.paper import ROOT, source_commit

    assert (ROOT / "engine" / "records" / "paper.py").is_file()  # the source tree, not a package inside it
    got = source_commit()
    if (ROOT / ".git").exists():  # a git checkout (a clone or a worktree): its HEAD, marked when edited
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", got) and got.removesuffix("+dirty") == head
    else:  # an installed copy: the package's version
        assert got.startswith("grok-tui ")
