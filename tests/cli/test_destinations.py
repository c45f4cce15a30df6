"""No command writes over or into a run or a group: every writing command, given a destination inside a run's
or a group's directory, refuses in one line naming that directory and what it is, exits 2, and leaves every
file of the run and the group byte-identical (engine/rundir/destination.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import DATA
from tests.cli.test_errors import assert_user_error
from tests.conftest import grok

pytestmark = pytest.mark.xdist_group("destinations")
TINY = str(DATA / "tiny.toml")
SWEEP = str(DATA / "tiny_sweep.toml")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A finished tiny run and a finished tiny sweep group (4 members), made once for the module."""
    out = tmp_path_factory.mktemp("runs")
    r = grok("run", "--config", TINY, "-q", "--out", str(out / "runs"))
    assert r.returncode == 0, r.stderr
    s = grok("sweep", "--config", SWEEP, "--seeds", "1", "--workers", "1", "-q", "--out", str(out / "groups"))
    assert s.returncode == 0, s.stderr
    (run,) = (out / "runs").iterdir()
    (group,) = (out / "groups").iterdir()
    return run, group


@pytest.fixture
def dirs(made: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """Copies of the run and the group for one test, so a command that wrote would not spoil the next."""
    run, group = made
    return Path(shutil.copytree(run, tmp_path / run.name)), Path(shutil.copytree(group, tmp_path / group.name))


def files(d: Path) -> dict[str, bytes]:
    """Every file under `d` by its path, and its bytes: what must not change."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def refused(args: list[str], owned: Path, what: str, cwd: Path | None = None) -> None:
    """`grok ARGS` exits 2 naming `owned` and what it is, and `owned`'s files are as they were."""
    before = files(owned)
    r = grok(*args, cwd=cwd)
    shown = "." if cwd == owned else str(owned)
    assert_user_error(r, f"{shown} is a {what}", "nothing written")
    assert files(owned) == before


def test_export_over_the_runs_own_log(dirs: tuple[Path, Path]) -> None:
    run, _ = dirs
    refused(["export", str(run), "-o", str(run / "metrics.csv")], run, "run directory")


def test_export_from_inside_the_run_over_its_summary(dirs: tuple[Path, Path]) -> None:
    run, _ = dirs
    refused(["export", ".", "-o", "summary.json"], run, "run directory", cwd=run)


def test_export_over_a_groups_results(dirs: tuple[Path, Path]) -> None:
    _, group = dirs
    refused(["export", str(group), "-o", str(group / "results.csv")], group, "sweep group directory")


@pytest.mark.parametrize("inside", ["", "checkpoints"])
def test_run_inside_a_run(dirs: tuple[Path, Path], inside: str) -> None:
    run, _ = dirs
    refused(["run", "--config", TINY, "-q", "--out", str(run / inside)], run, "run directory")


def test_run_inside_a_group(dirs: tuple[Path, Path]) -> None:
    _, group = dirs
    refused(["run", "--config", TINY, "-q", "--out", str(group)], group, "sweep group directory")


def test_tui_run_inside_a_run(dirs: tuple[Path, Path]) -> None:
    run, _ = dirs
    refused(["tui", "--config", TINY, "--out", str(run)], run, "run directory")


def test_fork_inside_a_run(dirs: tuple[Path, Path]) -> None:
    run, _ = dirs
    refused(["fork", str(run), "--steps", "80", "-q", "--out", str(run / "inner")], run, "run directory")


def test_fork_of_a_member_into_another_member(dirs: tuple[Path, Path]) -> None:
    _, group = dirs
    a, b = sorted(p for p in group.iterdir() if (p / "config.json").is_file())[:2]
    refused(["fork", str(a), "--steps", "80", "-q", "--out", str(b)], b, "run directory")


def test_fork_of_a_member_beside_it_in_its_group_is_the_design(dirs: tuple[Path, Path]) -> None:
    _, group = dirs
    member = next(p for p in sorted(group.iterdir()) if (p / "config.json").is_file())
    r = grok("fork", str(member), "--steps", "60", "--prepare", "-q")
    assert r.returncode == 0, r.stderr
    assert (group / f"{member.name}-fork40" / "config.json").is_file()


@pytest.mark.parametrize("inside", ["run", "group"])
def test_sweep_inside_a_run_or_a_group(dirs: tuple[Path, Path], inside: str) -> None:
    run, group = dirs
    owned, what = (run, "run directory") if inside == "run" else (group, "sweep group directory")
    refused(["sweep", "--config", SWEEP, "--seeds", "1", "-q", "--out", str(owned)], owned, what)


def test_paper_inside_a_run(dirs: tuple[Path, Path]) -> None:
    run, _ = dirs
    refused(["sweep", "--preset", "paper", "--seeds", "1", "--out", str(run)], run, "run directory")


def test_report_csv_over_a_groups_results(dirs: tuple[Path, Path]) -> None:
    _, group = dirs
    refused(["report", str(group), "--csv", str(group / "results.csv")], group, "sweep group directory")


def test_report_keep_into_a_run(dirs: tuple[Path, Path]) -> None:
    run, group = dirs
    refused(["report", str(group), "--keep", str(run)], run, "run directory")


def test_report_keep_replaces_the_kept_copy_it_made(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    _, group = dirs
    kept = tmp_path / "kept"
    for _ in range(2):
        r = grok("report", str(group), "--keep", str(kept))
        assert r.returncode == 0, r.stderr
    refused(["report", str(group), "--keep", str(kept / "inner")], kept, "kept group")


def test_figure_inside_a_run(dirs: tuple[Path, Path]) -> None:
    pytest.importorskip("matplotlib")
    run, _ = dirs
    refused(["figure", str(run), "-o", str(run / "curves.png")], run, "run directory")


# --- a setting that names a column is checked against the columns the run will log (engine/train/logged.py) ---


@pytest.mark.parametrize("patience", ["0", "3"])
def test_a_stop_metric_the_run_does_not_log_is_refused_whatever_the_patience(tmp_path: Path, patience: str) -> None:
    sets = ["--set", "train.stop_metric=nonexistent", "--set", f"train.patience={patience}"]
    r = grok("run", "--config", TINY, "-q", "--out", str(tmp_path / "runs"), *sets)
    assert_user_error(r, "train.stop_metric: 'nonexistent' is not a column this run logs")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    r = grok("sweep", "--config", SWEEP, "--seeds", "1", "-q", "--out", str(tmp_path / "groups"), *sets)
    assert_user_error(r, "train.stop_metric: 'nonexistent' is not a column this run logs")
    assert not (tmp_path / "groups").exists() or not any((tmp_path / "groups").iterdir())


def test_a_probe_column_is_a_stop_metric_only_with_its_probe_on(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    run, _ = dirs
    before = files(run.parent)
    r = grok("fork", str(run), "--steps", "80", "-q", "--set", "train.stop_metric=restricted_loss")
    assert_user_error(r, "train.stop_metric: 'restricted_loss' is not a column this run logs")
    assert files(run.parent) == before  # no fork directory made
    on = ["--set", "probe.progress_every=20", "--set", "train.stop_metric=restricted_loss", "--steps", "20"]
    assert grok("run", "--config", TINY, "-q", "--out", str(tmp_path / "runs"), *on).returncode == 0
