"""`grok fork` as a user runs it: a fork that trains, refusals with exit 2, `grok show` and resume."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.cli.conftest import grok


def parent_run(tmp_path: Path, tiny_toml: str) -> Path:
    r = grok(
        "run", "-c", tiny_toml, "--set", "train.keep_every=20", "--set", "train.threads=1", "--out", str(tmp_path), "-q"
    )
    assert r.returncode == 0, r.stderr
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    return d


def test_fork_trains_and_show_names_its_parent(tmp_path: Path, tiny_toml: str) -> None:
    parent = parent_run(tmp_path, tiny_toml)
    r = grok("fork", str(parent), "--at", "20", "--set", "optim.lr=2e-3", "-i", "rescale:3=x2", "-q", "--steps", "80")
    assert r.returncode == 0, r.stderr
    fork = parent.with_name(parent.name + "-fork20")
    s = json.loads((fork / "summary.json").read_text())
    assert s["status"] == "finished" and s["steps"] == 80 and s["parent"] == parent.name
    show = grok("show", str(fork))
    assert f"fork of {parent.name} at step 20" in show.stdout
    assert "intervention at 20: rescale 3: tokens 3: norm x2" in show.stdout
    assert "intervention at 20: set optim.lr: 0.001 -> 0.002" in show.stdout
    assert "kept checkpoints (3" in grok("show", str(parent)).stdout
    # the export names the parent and puts the interventions on the row they follow
    rows = list(csv.DictReader(io.StringIO(grok("export", str(fork), "-m", "val_acc").stdout)))
    assert {r["parent"] for r in rows} == {parent.name} and {r["fork_step"] for r in rows} == {"20"}
    assert [(r["step"], r["intervention"]) for r in rows if r["intervention"]] == [("20", "rescale 3; set optim.lr")]
    table = list(csv.DictReader(io.StringIO(grok("export", str(fork), "--interventions").stdout)))
    assert [(r["step"], r["kind"], r["target"]) for r in table] == [("20", "rescale", "3"), ("20", "set", "optim.lr")]
    # grok plot marks the fork step
    plot = grok("plot", str(fork), "-m", "val_loss", "--linear-x")
    assert plot.returncode == 0, plot.stderr
    lines = plot.stdout.splitlines()
    top = next(i for i, ln in enumerate(lines) if "┌" in ln)  # the key above the frame, F in both
    assert "F" in lines[top + 1] and "│ F " in " ".join(lines[:top])


def test_unchangeable_key_exits_2_with_one_line(tmp_path: Path, tiny_toml: str) -> None:
    parent = parent_run(tmp_path, tiny_toml)
    r = grok("fork", str(parent), "--at", "20", "--set", "data.p=13")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: data.p: cannot change mid-run"), r.stderr
    r = grok("fork", str(parent), "--at", "30")
    assert r.returncode == 2 and "no checkpoint at step 30 (kept: 20, 40, 60)" in r.stderr
    r = grok("fork", str(parent), "-i", "rescale:targets")
    assert r.returncode == 2 and "rescale takes =ring, =median_norm or =xK" in r.stderr


def test_prepared_fork_runs_with_resume(tmp_path: Path, tiny_toml: str) -> None:
    parent = parent_run(tmp_path, tiny_toml)
    r = grok("fork", str(parent), "--at", "40", "--prepare", "--out", str(tmp_path / "forks"))
    assert r.returncode == 0, r.stderr
    (fork,) = list((tmp_path / "forks").iterdir())
    assert json.loads((fork / "summary.json").read_text())["status"] == "prepared"  # not trained yet
    r = grok("run", "--resume", str(fork), "-q")
    assert r.returncode == 0, r.stderr
    assert json.loads((fork / "summary.json").read_text())["status"] == "finished"


def test_ls_shows_the_fork_tree(tmp_path: Path, tiny_toml: str) -> None:
    parent = parent_run(tmp_path, tiny_toml)
    for args in (("--at", "40"), ("--at", "20")):
        assert grok("fork", str(parent), *args, "--prepare").returncode == 0
    child = parent.with_name(parent.name + "-fork40")
    assert grok("fork", str(child), "--prepare").returncode == 0  # its latest checkpoint: step 40
    lines = grok("ls", str(tmp_path)).stdout.splitlines()[1:]
    names = [ln.split(" @")[0] + " @" + ln.split(" @")[1].split()[0] if " @" in ln else ln.split()[0] for ln in lines]
    assert names == [
        parent.name,
        f"└ {parent.name}-fork20 @20",
        f"└ {parent.name}-fork40 @40",
        f"  └ {parent.name}-fork40-fork40 @40",
    ]
