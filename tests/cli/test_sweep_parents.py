"""`grok sweep --parents GROUP`: a fork study links another group's ended runs, trains none of them, and
refuses parents that are not the runs its preset names (engine/sweep/parents.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.cli.conftest import DATA, grok
from tests.cli.test_errors import assert_user_error


def _groups(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.name.endswith("-sweep"))


@pytest.fixture(scope="module")
def parents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("parents")
    r = grok("sweep", "--config", str(DATA / "tiny_parents.toml"), "--out", str(out), "-w", "1", "-q", timeout=300)
    assert r.returncode == 0, r.stderr
    (g,) = _groups(out)
    return g


def _study(parents: Path, out: Path, *extra: str) -> tuple[int, str]:
    study = DATA / "tiny_fork_study.toml"
    args = ("sweep", "--config", str(study), "--out", str(out), "-w", "1", "--parents", str(parents), *extra)
    r = grok(*args, timeout=300)
    return r.returncode, r.stderr


def test_a_study_forks_from_the_parents_runs_without_training_them(parents: Path, tmp_path: Path) -> None:
    before = {p: (p / "metrics.csv").read_bytes() for p in parents.iterdir() if p.is_dir()}
    code, err = _study(parents, tmp_path)
    assert code == 0, err
    (g,) = _groups(tmp_path)
    links = sorted(p for p in g.iterdir() if p.is_symlink())
    assert [p.name for p in links] == ["m000-a-s0", "m001-a-s1"]
    assert all(p.resolve().parent == parents.resolve() for p in links)
    assert {p: (p / "metrics.csv").read_bytes() for p in parents.iterdir() if p.is_dir()} == before  # untouched
    rows = {r["member"]: r for r in csv.DictReader((g / "results.csv").open())}
    assert {rows[m]["status"] for m in rows} == {"finished"}
    assert rows["m000"]["run_dir"] == "m000-a-s0"  # the link's name in this group, not its target's
    fork = json.loads((g / "m002-a_nodecay-s0" / "summary.json").read_text())
    assert fork["parent"].endswith("m000-a-s0") and fork["fork_step"] == 40
    r = grok("report", str(g))
    assert r.returncode == 0 and "a_nodecay" in r.stdout


def test_parents_of_another_config_are_refused(parents: Path, tmp_path: Path) -> None:
    code, err = _study(parents, tmp_path, "--set", "optim.weight_decay=0.5")
    assert code == 2 and "ran with optim.weight_decay = 0.001, this preset has 0.5" in err
    assert not _groups(tmp_path)  # nothing made


def test_a_member_the_parents_lack_is_trained_here(parents: Path, tmp_path: Path) -> None:
    code, err = _study(parents, tmp_path, "--seeds", "3")
    assert code == 0, err
    (g,) = _groups(tmp_path)
    assert [p.name for p in sorted(g.iterdir()) if p.is_symlink()] == ["m000-a-s0", "m001-a-s1"]
    assert (g / "m002-a-s2" / "summary.json").is_file() and not (g / "m002-a-s2").is_symlink()
    assert_user_error(grok("sweep", "--resume", str(parents), "--parents", str(parents)), "drop")
