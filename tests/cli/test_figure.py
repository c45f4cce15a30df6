"""`grok figure` as a user runs it: files written, one-line errors, and the install hint without matplotlib."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import grok
from tests.cli.test_errors import assert_user_error
from tests.engine.sweep.fakegroup import fake_group
from tests.figures.test_figures import ARMS, STEPS, _curve, _run_dir


def test_without_matplotlib_says_how_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None  # an import of it now raises ImportError\n"
        "from grok_tui.cli import main\nsys.argv = ['grok', *sys.argv[1:]]\nmain()"
    )
    d = _run_dir(tmp_path)
    env = {**os.environ, "NO_COLOR": "1"}
    r = subprocess.run(
        [sys.executable, "-c", code, "figure", str(d), "-o", str(tmp_path / "f.png")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == ["error: figures need matplotlib: pip install 'grok-tui[figures]'"]
    assert not (tmp_path / "f.png").exists()


def test_figure_of_a_run_and_a_group(tmp_path: Path) -> None:
    d = _run_dir(tmp_path)
    g = fake_group(tmp_path, ARMS, _curve, STEPS)
    r = grok("figure", str(d), str(g.dir), "-o", str(tmp_path / "f.svg"), "--metrics", "val_acc", "--smooth", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"wrote {tmp_path / 'f.svg'}"
    assert (tmp_path / "f.svg").read_bytes().startswith(b"<?xml")


def test_claim_and_paper(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    g = fake_group(runs, ARMS, _curve, STEPS, preset="fig7_hessian")
    r = grok("figure", "--claim", "fig7", str(g.dir), "-o", str(tmp_path / "fig7.pdf"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "fig7.pdf").read_bytes().startswith(b"%PDF-")
    r = grok("figure", "--paper", str(runs), "-o", str(tmp_path / "figs"), env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    out = r.stdout  # the path whole, on the line or alone on the next, and every other line within 80 columns
    assert out.startswith(f"wrote fig7 (from {g.dir.name}):") and str(tmp_path / "figs" / "fig7.png") in out.split()
    assert all(len(line) <= 80 for line in out.splitlines() if line.strip() != str(tmp_path / "figs" / "fig7.png"))
    assert (tmp_path / "figs" / "fig7.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-o", "f.jpg"], "must end in .png, .svg or .pdf"),
        (["-o", "f.png", "--x", "time"], "--x must be step or epoch"),
        (["-o", "f.png", "--smooth", "0"], "--smooth must be >= 1"),
        (["-o", "f.png", "--metrics", "nope"], "unknown metric(s) nope"),
        (["-o", "f.png", "--claim", "fig99"], "unknown claim"),
        ([], "-o FILE is required"),
    ],
)
def test_figure_user_errors(tmp_path: Path, args: list[str], needle: str) -> None:
    d = _run_dir(tmp_path)
    assert_user_error(grok("figure", str(d), *args, cwd=tmp_path), needle)


def test_paper_without_claim_groups(tmp_path: Path) -> None:
    assert_user_error(grok("figure", "--paper", str(tmp_path), "-o", str(tmp_path / "o")), "no sweep group of a claim")


def test_paper_skips_a_claim_with_nothing_to_draw(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    fake_group(runs, ARMS, _curve, STEPS, preset="fig7_hessian")
    fake_group(runs, ARMS, _curve, STEPS, preset="fig10_rank")  # no rank columns logged
    r = grok("figure", "--paper", str(runs), "-o", str(tmp_path / "figs"), env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    assert "skipped fig10: " in r.stderr and "nothing to draw for fig10" in r.stderr
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["fig7.png"]
