"""A kept group (engine/rundir/keep.py, `grok report GROUP --keep DIR`) reads back as the group it was kept from."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from engine.config import ConfigError
from engine.records.group_dir import Group
from engine.rundir.csvlog import read_csv
from engine.rundir.files import KEPT
from engine.rundir.keep import TAIL_ROWS, Provenance, clean_argv, keep_group, read_provenance
from engine.rundir.pack import PACK
from engine.sweep.report.tables import render
from tests.conftest import grok
from tests.engine.sweep.fakegroup import fake_group

ROOT = Path(__file__).resolve().parents[2]


def keep(
    src: Path, dst: Path, commit: str = "abc1234", machine: str | None = "2-core CPU", max_rows: int | None = None
) -> Provenance:
    """`keep_group` with a fixed stamp: a commit, a machine and a date."""
    return keep_group(src, dst, commit=commit, machine=machine, kept="2026-01-01T00:00:00Z", max_rows=max_rows)


def _body(text: str) -> str:
    """A report without its first line (which names the directory)."""
    return text.split("\n", 1)[1]


def test_clean_argv_drops_paths() -> None:
    argv = ["/venv/bin/grok", "sweep", "--preset", "x", "--out", "/data/runs", "--config=/a/b.toml", "--workers", "1"]
    assert clean_argv(argv) == ["grok", "sweep", "--preset", "x", "--workers", "1"]
    assert clean_argv(["/tree/grok_tui/__main__.py", "sweep", "-q"]) == ["grok", "sweep", "-q"]  # python -m grok_tui


def test_a_kept_fork_group_reports_as_the_group(fork_group: Group, tmp_path: Path) -> None:
    dst = tmp_path / "kept"
    prov = keep(fork_group.dir, dst)
    assert (prov.members, prov.ended, prov.preset) == (6, 6, "fork_feed_starved")
    assert read_provenance(dst) == prov
    kept = Group.open(dst)
    assert _body(render(kept, "markdown")) == _body(render(fork_group, "markdown"))  # interventions included
    assert "interventions" in render(kept)
    for f in dst.rglob("*.json"):  # no path of the machine that ran it
        text = f.read_text()
        assert str(fork_group.dir.parent) not in text and str(tmp_path) not in text, f
    # the members in one pack beside the group's text files; unpacked, no checkpoint
    assert sorted(f.name for f in dst.iterdir()) == ["group.json", KEPT, PACK, "results.csv"]
    members = [kept.member_dir(m) for m in kept.members]
    assert len(members) == 6 and all(d.is_dir() for d in members) and not any(members[0].glob("*.pt"))
    # a fork keeps its window and the rows up to its fork step that a tail of TAIL_ROWS reads, no more; and
    # none of the per-token lists no table reads of a fork
    for m in (m for m in kept.members if m.fork_of):
        src, out = read_csv(fork_group.member_dir(m) / "metrics.csv"), read_csv(kept.member_dir(m) / "metrics.csv")
        at = json.loads((kept.member_dir(m) / "summary.json").read_text())["fork_step"]
        window = sum(float(r["step"]) > at for r in src)
        want = src[-(window + max(1, TAIL_ROWS - window)) :]
        assert [(r["step"], r["val_acc"]) for r in out] == [(r["step"], r["val_acc"]) for r in want]
        assert float(out[0]["step"]) <= at
        summary = json.loads((kept.member_dir(m) / "summary.json").read_text())
        assert "draw_share" not in summary and "train_pairs" not in summary
        assert "token_freq" not in json.loads((kept.member_dir(m) / "config.json").read_text())["_meta"]


def test_keep_thins_rows_but_keeps_tail_peak_and_fork_rows(tmp_path: Path) -> None:
    steps = list(range(0, 5000, 10))  # 500 evaluations

    def curve(m: object) -> dict[str, list[float]]:
        loss = [1.0 / (1 + i) for i in range(len(steps))]
        loss[137] = 9.5  # a spike: max:train_loss must survive thinning
        return {
            "val_acc": [min(1.0, i / 400) for i in range(len(steps))],
            "train_loss": loss,
            "wall_s": [float(s) for s in steps],
        }

    table = {"seeds": 2, "compare": "a", "arms": {"a": {"optim.lr_ratio": 1.0}, "b": {"optim.lr_ratio": 10.0}}}
    g = fake_group(tmp_path / "src", table, curve, steps)
    dst = tmp_path / "kept"
    keep(g.dir, dst, max_rows=50)
    kept = Group.open(dst)
    rows = read_csv(kept.member_dir(kept.members[0]) / "metrics.csv")
    assert 50 <= len(rows) <= 50 + 20 + 2 and "wall_s" not in rows[0]
    assert max(float(r["train_loss"]) for r in rows) == 9.5
    assert rows[-1]["step"] == "4990"
    for metrics in (None, ["max:train_loss"]):
        assert _body(render(kept, "text", 5, metrics)) == _body(render(g, "text", 5, metrics))
    # a row drawn between the exact ones is at 4 significant digits; the tail a report reads is as written
    assert math.isclose(float(rows[1]["train_loss"]), 1.0 / (1 + int(rows[1]["step"]) / 10), rel_tol=1e-3)
    assert len(rows[1]["train_loss"]) <= 7
    assert float(rows[-1]["train_loss"]) == 1.0 / 500


def test_keep_refuses_what_it_would_lose(fork_group: Group, tmp_path: Path) -> None:
    other = tmp_path / "notes"
    other.mkdir()
    (other / "a.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a kept group"):
        keep(fork_group.dir, other)
    assert (other / "a.txt").read_text() == "mine"
    with pytest.raises(ConfigError, match="not a sweep group"):
        keep(tmp_path, tmp_path / "x")
    dst = tmp_path / "again"
    keep(fork_group.dir, dst)
    keep(fork_group.dir, dst, commit="def5678")  # a kept group is replaced
    assert json.loads((dst / KEPT).read_text())["commit"] == "def5678"


def test_cli_keep_then_report_and_figure(fork_group: Group, tmp_path: Path) -> None:
    dst = tmp_path / "data" / "forks"
    r = grok("report", str(fork_group.dir), "--keep", str(dst), env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("kept 6/6 members of ") and str(dst) in r.stdout.split()  # the path whole
    assert all(len(line) <= 80 for line in r.stdout.splitlines()[:2] if line.strip() != str(dst))
    a, b = grok("report", str(dst)), grok("report", str(fork_group.dir))
    assert a.returncode == 0 and _body(a.stdout) == _body(b.stdout)
    assert json.loads((dst / KEPT).read_text())["machine"].endswith("-core CPU")  # the runs trained on the CPU
    bad = grok("report", str(tmp_path), "--keep", str(tmp_path / "y"))
    assert bad.returncode == 2 and "not a sweep group" in bad.stderr and "Traceback" not in bad.stderr
    named = grok("report", str(fork_group.dir), "--keep", str(tmp_path / "z"), "--machine", "one H200 GPU")
    assert named.returncode == 0 and json.loads((tmp_path / "z" / KEPT).read_text())["machine"] == "one H200 GPU"
    alone = grok("report", str(fork_group.dir), "--machine", "one H200 GPU")
    assert alone.returncode == 2 and alone.stderr.strip() == "error: --machine and --commit go with --keep DIR"
    head = subprocess.run(["git", "log", "-1", "--format=%h", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    at = grok("report", str(fork_group.dir), "--keep", str(tmp_path / "c"), "--commit", head.stdout.strip())
    assert at.returncode == 0 and json.loads((tmp_path / "c" / KEPT).read_text())["commit"] == head.stdout.strip()
    wrong = grok("report", str(fork_group.dir), "--keep", str(tmp_path / "w"), "--commit", "no-such-ref")
    assert wrong.returncode == 2 and "--commit no-such-ref: this checkout has no such commit" in wrong.stderr


def test_a_group_trained_on_a_gpu_is_kept_as_such(fork_group: Group, tmp_path: Path) -> None:
    import shutil

    src = tmp_path / fork_group.dir.name
    shutil.copytree(fork_group.dir, src, symlinks=True)
    for f in src.glob("*/summary.json"):
        f.write_text(json.dumps({**json.loads(f.read_text()), "device": "cuda"}))
    assert keep(src, tmp_path / "kept", machine=None).machine == "a CUDA GPU"
    assert keep(fork_group.dir, tmp_path / "cpu", machine=None).machine.endswith("-core CPU")


def test_a_kept_group_kept_again_reports_the_same(fork_group: Group, tmp_path: Path) -> None:
    """Its members are read from its pack (they are not directories beside group.json)."""
    once, twice = tmp_path / "once", tmp_path / "twice"
    keep(fork_group.dir, once)
    prov = keep(once, twice)
    assert (prov.members, prov.ended) == (6, 6)
    assert _body(render(Group.open(twice), "markdown")) == _body(render(Group.open(once), "markdown"))


def test_a_kept_group_exports_its_members_seeds(fork_group: Group, tmp_path: Path) -> None:
    """A kept config.json leaves out the defaults, seed 0 among them: `grok export` still names each seed."""
    keep(fork_group.dir, tmp_path / "kept")
    r = grok("export", str(tmp_path / "kept"), "-o", str(tmp_path / "out.csv"))
    assert r.returncode == 0, r.stderr
    seeds = {(row["member"], row["seed"]) for row in read_csv(tmp_path / "out.csv")}
    assert {s for _, s in seeds} == {str(m.seed) for m in fork_group.members} == {"0", "1"}


def test_a_group_is_kept_with_the_commit_its_sweep_recorded(fork_group: Group, tmp_path: Path) -> None:
    import re
    import shutil

    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", str(fork_group.doc["commit"]))  # Group.create records it
    src = tmp_path / "src"
    shutil.copytree(fork_group.dir, src)
    doc = json.loads((src / "group.json").read_text())
    for recorded, kept in (("ab" * 20, ("ab" * 20)[:7]), ("cd" * 20 + "+dirty", ("cd" * 20)[:7] + "+dirty")):
        doc["commit"] = recorded  # a sweep run from another checkout than the one that keeps it
        (src / "group.json").write_text(json.dumps(doc))
        r = grok("report", str(src), "--keep", str(tmp_path / kept))
        assert r.returncode == 0, r.stderr
        assert json.loads((tmp_path / kept / KEPT).read_text())["commit"] == kept
