"""`grok circuit DIR...` on a tiny real run with the progress probe, and on a directory that is not a run."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import grok
from tests.engine.test_probes_progress import progress_run


def test_circuit_on_a_tiny_run(tmp_path: Path) -> None:
    run_dir = progress_run(tmp_path)
    r = grok("circuit", str(run_dir), "--format", "markdown")
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| mul, random | 1 |")]
    assert len(rows) == 2  # one row in each table
    assert "over all 1 runs" in r.stdout
    # a 60-step run memorizes nothing: no phase, no jump, but the ring at its end is measured
    cells = rows[1].split(" | ")
    assert cells[3].count("(") == 2 and all(c != "-" for c in cells[3:6])  # one run: its range, rare / other
    text = grok("circuit", str(run_dir))
    assert text.returncode == 0 and "mul, random" in text.stdout


def test_circuit_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    for args in ([str(tmp_path)], [str(tmp_path / "missing")], [str(tmp_path), "--format", "html"]):
        r = grok("circuit", *args)
        assert r.returncode == 2 and r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1
        assert "Traceback" not in r.stderr


def test_pooled_lines_fold_at_spaces_and_lose_no_word(tmp_path: Path) -> None:
    run_dir = progress_run(tmp_path)

    def pooled(out: str) -> list[str]:
        return out[out.index("on the claimed side:") :].split()

    narrow = grok("circuit", str(run_dir), env={"COLUMNS": "50"})
    wide = grok("circuit", str(run_dir), "--wide", env={"COLUMNS": "50"})
    assert narrow.returncode == 0 and wide.returncode == 0, narrow.stderr + wide.stderr
    tail = narrow.stdout[narrow.stdout.index("over all") :].splitlines()
    assert tail and all(len(line) <= 50 for line in tail), tail
    wide_tail = wide.stdout[wide.stdout.index("over all") :].splitlines()
    assert any(len(line) > 50 for line in wide_tail)  # the pooled lines did need folding
    assert pooled(narrow.stdout) == pooled(wide.stdout)  # folded, not cut with …
