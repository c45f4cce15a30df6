"""`grok circuit DIR...` on a tiny real run with the progress probe, and on a directory that is not a run."""

from __future__ import annotations

from pathlib import Path

from engine.config import RunConfig, apply_overrides
from tests.cli.conftest import grok


def test_circuit_on_a_tiny_run(tmp_path: Path) -> None:
    from engine.run import Run

    cfg = apply_overrides(
        RunConfig(),
        {"data.p": "11", "data.op": "mul", "train.max_steps": "60", "train.eval_every": "20", "train.seed": "3"}
        | {"probe.progress_every": "20", "model.d_embed": "16", "model.d_hidden": "32", "train.device": "cpu"},
    )
    run = Run(cfg, out=tmp_path)
    for _ in run.events():
        pass
    r = grok("circuit", str(run.dir), "--format", "markdown")
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| mul, random | 1 |")]
    assert len(rows) == 2  # one row in each table
    assert "over all 1 runs" in r.stdout
    # a 60-step run memorizes nothing: no phase, no jump, but the ring at its end is measured
    cells = rows[1].split(" | ")
    assert cells[3].count("[") == 2 and all(c != "-" for c in cells[3:6])
    text = grok("circuit", str(run.dir))
    assert text.returncode == 0 and "mul, random" in text.stdout


def test_circuit_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    for args in ([str(tmp_path)], [str(tmp_path / "missing")], [str(tmp_path), "--format", "html"]):
        r = grok("circuit", *args)
        assert r.returncode == 2 and r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1
        assert "Traceback" not in r.stderr
