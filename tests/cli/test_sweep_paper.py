"""`grok sweep --preset paper` on two tiny sweeps: the paper directory, its record, an interrupt and --resume."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import DATA, grok
from tests.cli.test_errors import assert_user_error

TINY_PAPER = (("tiny_a", "A: a tiny claim"), ("tiny_b", "B: another"))


@pytest.fixture
def tiny_paper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """engine.claims.paper's list cut to two sweep presets of 2 members each (p = 11), in a presets dir of their own."""
    import engine.claims.paper
    import engine.config.presets

    presets = tmp_path / "presets"
    presets.mkdir()
    text = (DATA / "tiny_sweep.toml").read_text().replace('"data.op" = ["add", "mul"]', '"data.op" = ["add"]')
    for name, _ in TINY_PAPER:
        (presets / f"{name}.toml").write_text(text)
    monkeypatch.setattr(engine.config.presets, "presets_dir", lambda: presets)
    monkeypatch.setattr(engine.claims.paper, "PAPER_SWEEPS", TINY_PAPER)
    return tmp_path / "runs"


def run_paper(out: Path) -> int:
    from grok_tui.commands.sweep_paper import run_paper as run

    return run([], 1, 20, str(out), None, 1, "local", None, True)


def record(paper_dir: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((paper_dir / "paper.json").read_text())
    return doc


def the_paper_dir(out: Path) -> Path:
    (d,) = list(out.iterdir())
    assert d.name.endswith("-paper")
    return d


def test_paper_dir_holds_each_group_and_the_record(tiny_paper: Path) -> None:
    assert run_paper(tiny_paper) == 0
    d = the_paper_dir(tiny_paper)
    doc = record(d)
    assert [(s["preset"], s["status"], len(s["segments"])) for s in doc["sweeps"]] == [
        ("tiny_a", "ended", 1),
        ("tiny_b", "ended", 1),
    ]
    assert doc["options"] == {"sets": [], "seeds": 1, "steps": 20, "device": None}
    for s in doc["sweeps"]:
        assert (d / s["group"] / "group.json").is_file()
        assert (d / s["group"] / "results.csv").read_text().count("finished") == 2
        (seg,) = s["segments"]
        assert seg["cores"] == os.cpu_count() and seg["workers"] == 1 and seg["exit"] == 0 and seg["commit"]
        assert seg["wall_s"] > 0 and seg["end"] >= seg["start"]
        # the pool's worker was joined before the segment closed: its CPU time (torch's import alone) is in
        assert seg["cpu_workers_s"] > 0.1
        assert seg["cpu_s"] == pytest.approx(seg["cpu_self_s"] + seg["cpu_workers_s"], abs=2e-3)


def test_interrupt_between_groups_then_resume_runs_only_what_is_missing(
    tiny_paper: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grok_tui.commands.sweep_group as sweep_cmd

    made = []
    real_new_group = sweep_cmd.new_group

    def new_group_then_sigterm(*a: Any, **kw: Any) -> Any:
        g = real_new_group(*a, **kw)
        made.append(g.dir)
        if len(made) == 2:  # the second group exists, no member of it has run: a SIGTERM comes
            signal.raise_signal(signal.SIGTERM)
        return g

    monkeypatch.setattr(sweep_cmd, "new_group", new_group_then_sigterm)
    assert run_paper(tiny_paper) == 143
    d = the_paper_dir(tiny_paper)
    doc = record(d)
    assert [s["status"] for s in doc["sweeps"]] == ["ended", "interrupted"]
    seg = doc["sweeps"][1]["segments"][0]
    assert seg["exit"] == 143 and seg["end"] is not None and seg["wall_s"] >= 0
    first_results = (made[0] / "results.csv").read_bytes()
    assert not (made[1] / "results.csv").exists()

    r = grok("sweep", "--resume", str(d), "--workers", "1", "--quiet", timeout=300)
    assert r.returncode == 0, r.stderr
    assert "1 of 2 sweeps ended, 1 to run" in r.stdout
    doc = record(d)
    assert [(s["status"], len(s["segments"])) for s in doc["sweeps"]] == [("ended", 1), ("ended", 2)]
    assert doc["sweeps"][1]["group"] == made[1].name  # the interrupted group went on, no new one
    assert sorted(p.name for p in d.iterdir() if p.is_dir()) == sorted(p.name for p in made)
    assert (made[0] / "results.csv").read_bytes() == first_results  # the ended sweep was not run again
    assert (made[1] / "results.csv").read_text().count("finished") == 2
    assert "real wall time" in r.stdout and "the sum of 3 segment(s)" in r.stdout

    again = grok("sweep", "--resume", str(d), "--quiet")
    assert again.returncode == 0 and "2 of 2 sweeps ended, 0 to run" in again.stdout
    assert [len(s["segments"]) for s in record(d)["sweeps"]] == [1, 2]


def valid_record() -> dict[str, Any]:
    seg = {"start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:01:40Z", "wall_s": 100.0, "cpu_s": 150.0}
    seg.update(cpu_self_s=10.0, cpu_workers_s=140.0, cores=2, workers=2, backend="local", commit="abc", exit=0)
    return {
        "format": "grok-tui paper",
        "version": 1,
        "created": "2026-01-01T00:00:00Z",
        "options": {"sets": [], "seeds": None, "steps": None, "device": None},
        "sweeps": [
            {"preset": "fig2_embeddings", "claim": "1", "group": "g1", "status": "ended", "segments": [seg]},
            {"preset": "fig2_long", "claim": "1", "group": "", "status": "pending", "segments": []},
        ],
    }


def _broken(change: str) -> Any:
    doc = valid_record()
    if change == "json":
        return "{not json"
    if change == "foreign":
        return {"format": "something else", "sweeps": []}
    if change == "list":
        return [1, 2]
    if change == "escape":
        doc["sweeps"][0]["group"] = "../elsewhere"
    elif change == "status":
        doc["sweeps"][1]["status"] = "done"
    elif change == "wall":
        doc["sweeps"][0]["segments"][0]["wall_s"] = -5
    elif change == "missing":
        del doc["sweeps"][0]["segments"][0]["cores"]
    return doc


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ("json", "malformed JSON"),
        ("foreign", "not a grok-tui paper record"),
        ("list", "expected a JSON object"),
        ("escape", "sweeps[0].group: must be a directory name"),
        ("status", "sweeps[1].status: must be one of pending"),
        ("wall", "sweeps[0].segments[0].wall_s: must be a number ≥ 0"),
        ("missing", "sweeps[0].segments[0].cores: missing"),
    ],
)
def test_a_corrupt_or_foreign_record_is_one_line(tmp_path: Path, change: str, needle: str) -> None:
    doc = _broken(change)
    (tmp_path / "paper.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
    assert_user_error(grok("sweep", "--resume", str(tmp_path)), "paper.json", needle)
    assert_user_error(grok("report", str(tmp_path)), "paper.json", needle)
    assert not (tmp_path / ".lock").exists()  # refused before anything was taken or written


def test_report_of_a_paper_dir_gives_each_groups_busy_share(tmp_path: Path) -> None:
    doc = valid_record()
    more = dict(doc["sweeps"][0]["segments"][0], start="2026-01-01T01:00:00Z", end="2026-01-01T01:00:50Z")
    more.update(wall_s=50.0, cpu_s=90.0)
    doc["sweeps"][0]["segments"].append(more)
    (tmp_path / "paper.json").write_text(json.dumps(doc))
    r = grok("report", str(tmp_path))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    (row,) = [ln for ln in lines if ln.startswith("fig2_embeddings")]
    assert row.split() == ["fig2_embeddings", "ended", "2", "2.5", "min", "240", "80%"]  # 240 / (150 × 2)
    assert "1 of 2 sweeps ended; real wall time 2.5 min, the sum of 2 segment(s)" in r.stdout
    assert "first start to last end 60.8 min: the 58.3 min between segments" in r.stdout  # 3,650 s, 150 run
    assert "= 80%" in r.stdout and "commit: abc" in r.stdout


def test_a_killed_segment_is_shown_and_not_counted(tiny_paper: Path) -> None:
    """A process killed with SIGKILL leaves its sweep `running` and its segment without an end."""
    from engine.rundir.dirs import write_paper_doc

    assert run_paper(tiny_paper) == 0
    d = the_paper_dir(tiny_paper)
    doc = record(d)
    seg = doc["sweeps"][1]["segments"][0]
    seg.update(end=None, wall_s=None, cpu_s=None, cpu_self_s=None, cpu_workers_s=None, exit=None)
    doc["sweeps"][1]["status"] = "running"
    write_paper_doc(d, doc)
    r = grok("report", str(d))
    assert r.returncode == 0, r.stderr
    assert [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("tiny_")] == ["ended", "killed"]
    assert "1 segment(s) have no end (their process was killed): not counted" in r.stdout
    assert "the sum of 1 segment(s)" in r.stdout

    r = grok("sweep", "--resume", str(d), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "0 of 2 members to train" in r.stdout  # its members had ended: nothing is trained again
    assert [(s["status"], len(s["segments"])) for s in record(d)["sweeps"]] == [("ended", 1), ("ended", 2)]
    assert "the sum of 2 segment(s)" in r.stdout and "1 segment(s) have no end" in r.stdout


def test_a_paper_in_use_is_refused(tmp_path: Path) -> None:
    from engine.rundir import RunLock

    (tmp_path / "paper.json").write_text(json.dumps(valid_record()))
    with RunLock(tmp_path):
        assert_user_error(grok("sweep", "--resume", str(tmp_path)), f"{tmp_path} is in use by pid {os.getpid()}")
    assert record(tmp_path) == valid_record()


def test_a_bad_option_for_one_sweep_names_it_before_anything_is_made(tiny_paper: Path) -> None:
    from engine.config import ConfigError
    from grok_tui.commands.sweep_paper import run_paper as run

    with pytest.raises(ConfigError, match=r"^--preset paper: sweep tiny_a: --set data.op: this key is swept"):
        run(["data.op=mul"], 1, 20, str(tiny_paper), None, 1, "local", None, True)
    assert not tiny_paper.exists()
