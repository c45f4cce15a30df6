"""The notebook API (`from grok_tui import open_run, open_group`, docs/API.md) on a group that `grok sweep`
made: numpy columns, the group's curves, the optional pandas frame, and a paired difference that equals
the one `grok report` prints."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.records.paired import spread
from engine.records.stats import paired, seed_interval
from grok_tui import GroupRecord, RunRecord, open_group, open_run
from tests.cli.conftest import DATA, grok


@pytest.fixture(scope="module")
def group_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/data/tiny_sweep.toml: 2 arms × 2 ops × 2 seeds, 40 steps, evaluated every 20."""
    out = tmp_path_factory.mktemp("sweeps")
    # one worker: the API reads the group, whatever ran it (each worker process imports torch: 2 CPU-s)
    r = grok(
        "sweep", "--config", str(DATA / "tiny_sweep.toml"), "-q", "--workers", "1", "--out", str(out),
        "--set", "train.threads=1",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    (g,) = [p for p in out.iterdir() if p.name.endswith("-sweep")]
    return g


def test_open_run_gives_numpy_columns(group_dir: Path) -> None:
    run = open_run(next(d for d in sorted(group_dir.iterdir()) if d.is_dir()))
    assert isinstance(run, RunRecord) and run.summary.status == "finished" and run.summary.steps == 40
    with open(run.path / "metrics.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(run.metrics) == list(rows[0])
    assert run.metrics["step"].tolist() == [0.0, 20.0, 40.0]
    assert run.metrics["val_acc"].dtype == np.float64
    assert run.metrics["val_acc"].tolist() == [float(r["val_acc"]) for r in rows]  # exact: floats are written by repr


def test_open_group_gives_the_curves_of_each_cell(group_dir: Path) -> None:
    g = open_group(group_dir)
    assert isinstance(g, GroupRecord) and len(g.runs) == 8
    curves = g.curves("val_acc")
    assert [c.label for c in curves] == ["adam op=add", "adam op=mul", "adamlr op=add", "adamlr op=mul"]
    for c in curves:
        assert c.n == 2 and c.steps.tolist() == [0.0, 20.0, 40.0]
        seeds = [g.runs[m.id].metrics["val_acc"] for m in c.members]
        assert np.allclose(c.mean, np.mean(seeds, axis=0), rtol=0, atol=1e-12)
        assert np.all(c.min <= c.mean) and np.all(c.mean <= c.max)
    cols = g.metrics
    assert len(cols["member"]) == 8 * 3 and set(cols["data.op"]) == {"add", "mul"}


def test_a_paired_difference_equals_grok_reports(group_dir: Path) -> None:
    """docs/API.md's paired difference: adamlr - adam in final val_acc per op, paired by seed, with the
    spread and the sign test `grok report` prints."""
    g = open_group(group_dir)
    finals = g.finals()
    val = {(m.arm, m.values["data.op"], m.seed): finals[m.id]["val_acc"] for m in g.group.members}
    report = grok("report", str(group_dir)).stdout
    for op in ("add", "mul"):
        mine, base = [val["adamlr", op, s] for s in (0, 1)], [val["adam", op, s] for s in (0, 1)]
        p, d = paired(mine, base), seed_interval([a - b for a, b in zip(mine, base, strict=True)])
        line = f"val_acc: adamlr - adam = {spread(d, '+.3f')}, {p['wins']}/{p['n']} seeds higher, "
        assert re.search(re.escape(line) + r".*\(n=2\) \[op=" + op + r"\]", report), (line, report)


def test_to_pandas_where_pandas_is_installed(group_dir: Path) -> None:
    import pandas as pd  # type: ignore[import-untyped]  # the test extra installs it (pyproject.toml), no stubs

    g = open_group(group_dir)
    df = g.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == 24 and df["val_acc"].dtype == np.float64
    run = next(iter(g.runs.values()))
    assert run.to_pandas()["step"].tolist() == [0.0, 20.0, 40.0]


def test_to_pandas_without_pandas_says_how_to_get_it(group_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    g = open_group(group_dir)
    for record in (g, next(iter(g.runs.values()))):
        with pytest.raises(ImportError, match=re.escape("pip install 'grok-tui[pandas]'")):
            record.to_pandas()


def test_a_bad_directory_is_one_config_error(tmp_path: Path) -> None:
    from engine.config import ConfigError

    with pytest.raises(ConfigError, match="not a run directory"):
        open_run(tmp_path)
    with pytest.raises(ConfigError, match="not a sweep group directory"):
        open_group(tmp_path)


def test_a_group_opened_as_a_run_names_what_reads_it(group_dir: Path) -> None:
    """open_run and `grok show` on a group say that it is one and name open_group and `grok report`."""
    from engine.config import ConfigError

    with pytest.raises(ConfigError, match=r"a sweep group \(open_group reads it in Python\), not a run directory"):
        open_run(group_dir)
    r = grok("show", str(group_dir))
    assert r.returncode == 2 and f"`grok report {group_dir}` reports it" in " ".join(r.stderr.split())


def test_compare_gives_the_lines_grok_report_prints(group_dir: Path) -> None:
    """GroupRecord.compare: typed paired differences whose text is exactly the report's paired lines."""
    g = open_group(group_dir)
    got = g.compare("val_acc", "adamlr")
    assert [(c.label, c.baseline, dict(c.context)["data.op"], c.n) for c in got] == [
        ("adamlr", "adam", "add", 2),
        ("adamlr", "adam", "mul", 2),
    ]
    report = grok("report", str(group_dir), "--wide").stdout.splitlines()
    assert [c.text() for c in got] == [line.strip() for line in report if line.strip().startswith("val_acc: ")]
    assert got == g.compare("val_acc", "adamlr", baseline="adam") and g.compare("val_acc", "adam") == []
    finals = g.finals()
    c = got[0]
    mine = [finals[m.id]["val_acc"] for m in g.members if m.arm == "adamlr" and m.values["data.op"] == "add"]
    base = [finals[m.id]["val_acc"] for m in g.members if m.arm == "adam" and m.values["data.op"] == "add"]
    assert c.diff.mean == pytest.approx(np.mean(np.subtract(mine, base)), abs=1e-12)


def test_results_rows_are_typed(group_dir: Path) -> None:
    from engine.records.results import ResultsRow

    g = open_group(group_dir)
    rows = g.results()
    assert len(rows) == 8 and all(isinstance(r, ResultsRow) for r in rows.values())
    r = rows["m000"]
    assert (r.status, r.steps, r.max_steps, r.seed, r.arm) == ("finished", 40, 40, 0, "adam")
    assert r.generalized_step is None and r.memorized_step is None  # empty cells: never reached
    assert isinstance(r.final_val_acc, float) and r.swept["data.op"] == "add" and r["data.op"] == "add"
    with open(group_dir / "results.csv", newline="") as fh:
        raw = next(csv.DictReader(fh))
    assert raw["generalized_step"] == "" and float(raw["final_val_acc"]) == r.final_val_acc


def test_a_bad_results_cell_is_one_config_error(tmp_path: Path) -> None:
    from engine.config import ConfigError
    from engine.records.results import ResultsRow

    row = ResultsRow.of({"member": "m0", "steps": "40", "generalized_step": "", "final_norm_E": "1.5"}, [])
    assert (row.steps, row.generalized_step, row.probes) == (40, None, {"final_norm_E": 1.5})
    with pytest.raises(ConfigError, match=r"results\.csv: member m0: steps: not a value the sweep writes"):
        ResultsRow.of({"member": "m0", "steps": "forty"}, [])
    with pytest.raises(ConfigError, match="status"):
        ResultsRow.of({"member": "m0", "status": "grokked"}, [])


def test_to_pandas_holds_the_swept_values_and_the_status(group_dir: Path) -> None:
    import pandas  # noqa: F401 - the test extra installs it (pyproject.toml)

    df = open_group(group_dir).to_pandas()
    assert list(df.columns[:6]) == ["member", "arm", "seed", "status", "optim.lr_ratio", "data.op"]
    assert set(df["status"]) == {"finished"} and set(df["optim.lr_ratio"]) == {1.0, 10.0}
    assert len(df.groupby(["arm", "data.op", "step"])) == 2 * 2 * 3


def test_open_runs_lists_every_run_with_its_config_and_summary(group_dir: Path) -> None:
    from grok_tui import ConfigError, RunTable, open_runs

    runs = open_runs(group_dir.parent)
    assert isinstance(runs, RunTable) and len(runs) == 8 and runs.errors == []
    assert all(isinstance(r, RunRecord) for r in runs)
    rows = runs.rows()
    assert {r["status"] for r in rows} == {"finished"} and {r["data.op"] for r in rows} == {"add", "mul"}
    assert {r["optim.lr_ratio"] for r in rows} == {1.0, 10.0} and all(r["step"] == 40 for r in rows)
    assert [r["final_val_acc"] for r in rows] == [r.summary.final_val_acc for r in runs]
    with pytest.raises(ConfigError, match="not a directory"):
        open_runs(group_dir / "results.csv")


def test_api_md_shapes_hold(group_dir: Path) -> None:
    """The table sizes docs/API.md quotes for this sweep."""
    import pandas  # noqa: F401 - the test extra installs it (pyproject.toml)

    from grok_tui import open_runs

    assert open_group(group_dir).to_pandas().shape == (24, 22)
    assert "24 rows × 22 columns" in (Path(__file__).parents[1] / "docs/API.md").read_text()
    assert len(open_runs(group_dir)) == 8
