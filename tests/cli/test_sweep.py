"""`grok sweep` and `grok report` as a user runs them: errors, a whole tiny sweep, Ctrl-C."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.cli.conftest import DATA, grok
from tests.cli.test_errors import assert_user_error

SWEEP = str(DATA / "tiny_sweep.toml")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--preset", "skewed_mul"], ["has no [sweep] table", "grok run --preset skewed_mul"]),
        (["--preset", "fig6_optimizerz"], ["unknown preset", "fig6_optimizers"]),
        (["--config", SWEEP, "--set", "data.op=mul"], ["--set data.op: this key is swept"]),
        (["--config", SWEEP, "--set", "optim.lrr=1"], ["unknown config key 'optim.lrr'"]),
        (["--config", SWEEP, "--backend", "dask"], ["--backend must be local or ray"]),
        (["--config", SWEEP, "--address", "auto"], ["--address needs --backend ray"]),
        (["--config", SWEEP, "--seeds", "0"], ["--seeds must be >= 1"]),
        (["--config", SWEEP, "--workers", "-1"], ["--workers must be >= 0"]),
        ([], ["give --preset NAME"]),
    ],
)
def test_sweep_user_errors(tmp_path: Path, args: list[str], needles: list[str]) -> None:
    assert_user_error(grok("sweep", *args, "--out", str(tmp_path)), *needles)
    assert not any(tmp_path.iterdir())  # nothing is created before every member is checked


def test_resume_and_report_need_a_group_dir(tmp_path: Path) -> None:
    assert_user_error(grok("sweep", "--resume", str(tmp_path)), "not a sweep group directory")
    assert_user_error(grok("report", str(tmp_path)), "not a sweep group directory")
    r = grok("sweep", "--resume", str(tmp_path), "--preset", "fig6_optimizers")
    assert_user_error(r, "--resume runs a group with its own grid")


def _group_dir(out: Path) -> Path:
    (g,) = [p for p in out.iterdir() if p.name.endswith("-sweep")]
    return g


def test_sweep_then_report(tmp_path: Path) -> None:
    r = grok("sweep", "--config", SWEEP, "--seeds", "1", "--workers", "2", "--out", str(tmp_path), timeout=300)
    assert r.returncode == 0, r.stderr
    g = _group_dir(tmp_path)
    assert "[4/4]" in r.stdout and "comparison" in r.stdout and str(g) in r.stdout
    with open(g / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(x["arm"], x["data.op"], x["status"]) for x in rows] == [
        ("adam", "add", "finished"),
        ("adam", "mul", "finished"),
        ("adamlr", "add", "finished"),
        ("adamlr", "mul", "finished"),
    ]
    out_csv = tmp_path / "report.csv"
    rep = grok("report", str(g), "--csv", str(out_csv))
    assert rep.returncode == 0, rep.stderr
    assert "every cell" in rep.stdout and "by data.op" in rep.stdout
    assert out_csv.read_text().startswith("table,")
    again = grok("sweep", "--resume", str(g))
    assert again.returncode == 0 and "0 of 4 members to train, local backend" in again.stdout


def test_resume_says_apart_the_members_it_trains_and_those_it_adopts(tmp_path: Path) -> None:
    """A member whose run ended while no row was recorded (its sweep process was killed) is adopted,
    not trained: --resume counts it apart from the members it trains."""
    from engine.records.group_dir import Group
    from engine.sweep.member import member_spec, run_member
    from engine.sweep.spec import expand, parse_sweep
    from tests.conftest import tiny_config

    base, spec = tiny_config(), parse_sweep({"seeds": 3})
    g = Group.create(tmp_path, "tiny", base, spec, [m for m, _ in expand(base, spec)])
    first = g.members[0]
    assert run_member(member_spec(g, first), None, lambda: False)["status"] == "finished"  # not recorded
    rows_before = (g.member_dir(first) / "metrics.csv").read_bytes()
    r = grok("sweep", "--resume", str(g.dir), "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "2 of 3 members to train, 1 already ended (adopted from their run directories)" in r.stdout
    with open(g.dir / "results.csv", newline="") as fh:
        assert [x["status"] for x in csv.DictReader(fh)] == ["finished"] * 3
    assert (g.member_dir(first) / "metrics.csv").read_bytes() == rows_before  # adopted: not trained again
