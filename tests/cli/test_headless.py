"""The headless loop over SSH: `grok ls`, `grok plot`, `grok show`, group export, early stop, version, doctor."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import select
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tests.cli.conftest import DATA, grok

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs folder with one finished tiny run and one tiny sweep (2 arms x 2 ops, 1 seed)."""
    root = tmp_path_factory.mktemp("runs")
    r = grok("run", "--config", str(DATA / "tiny.toml"), "--steps", "40", "-q", "--out", str(root))
    assert r.returncode == 0, r.stderr
    s = grok(
        "sweep", "--config", str(DATA / "tiny_sweep.toml"), "--seeds", "1", "--steps", "20", "-q",
        "--workers", "1", "--out", str(root), timeout=300,
    )  # fmt: skip
    assert s.returncode == 0, s.stdout + s.stderr
    return root


def _run(root: Path) -> Path:
    return next(d for d in root.iterdir() if d.name.endswith("-tiny-s0"))


def _group(root: Path) -> Path:
    return next(d for d in root.iterdir() if d.name.endswith("-sweep"))


def _copy_as(run: Path, dest: Path, status: str) -> Path:
    """A copy of a finished run whose summary says `status` (a killed run's summary says running)."""
    shutil.copytree(run, dest)
    doc = json.loads((dest / "summary.json").read_text())
    (dest / "summary.json").write_text(json.dumps({**doc, "status": status, "steps": 20}))
    return dest


def _x_ticks(chart: str) -> str:
    """The line under a chart's bottom frame: its step-axis tick labels."""
    lines = chart.splitlines()
    return next(lines[i + 1] for i, ln in enumerate(lines) if ln.lstrip().startswith("└"))


def _wait_line(proc: subprocess.Popen[str], deadline_s: float = 60) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], deadline_s)
    assert ready, f"the lock holder printed nothing in {deadline_s} s"
    return proc.stdout.readline()


def test_ls_finished_live_killed_and_group(lab: Path, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    finished = shutil.copytree(_run(lab), root / "20260101-000000-tiny-s0")
    live = _copy_as(finished, root / "20260101-000001-tiny-s1", "running")
    killed = _copy_as(finished, root / "20260101-000002-tiny-s2", "running")
    group = shutil.copytree(_group(lab), root / _group(lab).name)
    # The lab makes its runs and its group within a second or two; recorded times have 1 s resolution,
    # so the group is dated after the runs here for the newest-first check below to have an answer.
    doc = json.loads((group / "group.json").read_text())
    (group / "group.json").write_text(json.dumps({**doc, "created": "2030-01-01T00:00:00+0000"}))
    code = "import sys; from engine.rundir import RunLock; lock = RunLock(sys.argv[1]).acquire(); print('locked', flush=True); sys.stdin.read()"  # noqa: E501
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(live)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert _wait_line(holder).strip() == "locked"
        r = grok("ls", str(root))
        assert r.returncode == 0, r.stderr
        lines = {ln.split()[0]: ln for ln in r.stdout.splitlines()[1:]}
        assert f"running pid {holder.pid}" in lines[live.name]
        assert " dead " in lines[killed.name] and "40/40" in lines[killed.name]
        assert "finished" in lines[finished.name] and "40/40" in lines[finished.name]
        assert "sweep done" in lines[_group(lab).name] and "4/4 done" in lines[_group(lab).name]
        j = grok("ls", str(root), "--json")
        entries = {e["name"]: e for e in json.loads(j.stdout)}
        assert entries[live.name]["status"] == "running" and entries[live.name]["pid"] == holder.pid
        assert entries[killed.name]["status"] == "dead" and entries[killed.name]["pid"] is None
        assert entries[killed.name]["step"] == 40  # progress from the rows, not the lagging summary
        g = entries[_group(lab).name]
        assert g["kind"] == "group" and g["n_members"] == 4 and g["n_finished"] == 4 and g["n_running"] == 0
        order = [e["name"] for e in json.loads(j.stdout)]
        assert order.index(_group(lab).name) < order.index(killed.name)  # newest first
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    s = grok("show", str(killed))
    assert s.returncode == 0, s.stderr
    assert f"no process: interrupted or killed; resume with:\n  grok run --resume {killed}" in s.stdout
    assert "steps             40" in s.stdout


def test_ls_user_errors(tmp_path: Path) -> None:
    r = grok("ls", str(tmp_path / "nope"))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr
    e = grok("ls", str(tmp_path))
    assert e.returncode == 0 and "no runs or sweep groups" in e.stdout


def test_plot_run_through_a_pipe(lab: Path) -> None:
    env = {**os.environ, "TERM": "dumb"}
    cmd = [sys.executable, "-m", "grok_tui", "plot", str(_run(lab)), "--width", "80", "--height", "20"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "train_acc" in out and "val_acc" in out  # the legend
    assert "\x1b[" not in out  # no colour codes in a pipe
    assert "step (log)" in out and "20" in _x_ticks(out).split()  # log step axis with its ticks
    assert any(ln.lstrip().startswith("1.00┤") for ln in out.splitlines())  # accuracy axis 0..1
    lin = grok("plot", str(_run(lab)), "--linear-x", "--metrics", "val_loss", "--width", "60", "--height", "12")
    assert lin.returncode == 0 and "val_loss" in lin.stdout and "40" in _x_ticks(lin.stdout).split()
    colored = grok("plot", str(_run(lab)), "--color", "--width", "60", "--height", "12")
    assert colored.returncode == 0 and "\x1b[38;5;" in colored.stdout  # asked for: colour codes even piped
    bad = grok("plot", str(_run(lab)), "--metrics", "nope")
    assert bad.returncode == 2 and "unknown metric(s) nope" in bad.stderr


def test_plot_group_mean_and_band(lab: Path) -> None:
    r = grok("plot", str(_group(lab)), "--metrics", "train_acc", "--width", "90", "--height", "20")
    assert r.returncode == 0, r.stderr
    assert "mean over seeds, · min–max" in r.stdout
    for cell in ("adam op=add", "adam op=mul", "adamlr op=add", "adamlr op=mul"):
        assert f"{cell} (n=1)" in r.stdout


def test_export_group_has_arm_member_and_grid_columns(lab: Path) -> None:
    g = _group(lab)
    e = grok("export", str(g), "--metrics", "val_acc")
    assert e.returncode == 0, e.stderr
    rows = list(csv.DictReader(io.StringIO(e.stdout)))
    assert list(rows[0])[:8] == ["run", "preset", "seed", "group", "arm", "member", "optim.lr_ratio", "data.op"]
    cells = {(r["member"], r["arm"], r["optim.lr_ratio"], r["data.op"]) for r in rows}
    assert cells == {
        ("m000", "adam", "1.0", "add"),
        ("m001", "adam", "1.0", "mul"),
        ("m002", "adamlr", "10.0", "add"),
        ("m003", "adamlr", "10.0", "mul"),
    }
    assert {r["group"] for r in rows} == {g.name} and len(rows) == 4 * 2  # evals at 0 and 20
    member = next(d for d in g.iterdir() if d.is_dir() and (d / "config.json").exists())
    one = list(csv.DictReader(io.StringIO(grok("export", str(member)).stdout)))
    assert one[0]["group"] == g.name and one[0]["member"] in {"m000", "m001", "m002", "m003"}
    old = grok("export", str(g), "--out", str(lab.parent / "old.csv"))
    assert old.returncode == 0 and "deprecated" in old.stderr and (lab.parent / "old.csv").exists()


def test_early_stop_is_said(tmp_path: Path) -> None:
    r = grok(
        "run", "--config", str(DATA / "tiny.toml"), "--steps", "200", "--out", str(tmp_path),
        "--set", "train.patience=2", "--set", "train.target_val_acc=0.0",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    note = "stopped early at step 20: val_acc ≥ 0 for 2 evaluations (train.patience)"
    assert r.stdout.count(note) == 1  # once, under the summary (the progress lines do not repeat it)
    d = next(tmp_path.iterdir())
    assert note in grok("show", str(d)).stdout


def test_version() -> None:
    r = grok("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"grok-tui {metadata.version('grok-tui')}"


def test_doctor_on_the_cpu(tmp_path: Path) -> None:
    r = grok("doctor", "--device", "cpu", "--seconds", "0.2", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert f"torch     {metadata.version('torch').split('+')[0]}" in r.stdout
    assert "device    cpu -> cpu" in r.stdout and "GFLOP/s" in r.stdout
    assert "threads   train.threads = 0 (auto) picks 1: OMP_NUM_THREADS=1 is set" in r.stdout  # tests/conftest.py
    assert f"runs      {tmp_path.resolve()} (0 runs, 0 sweep groups; writable)" in r.stdout
    bad = grok("doctor", "--device", "tpu")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --device tpu")


def test_report_formats_and_plot(lab: Path) -> None:
    g = str(_group(lab))
    md = grok("report", g, "--format", "markdown")
    assert md.returncode == 0, md.stderr
    assert "| arm | data.op | generalized |" in md.stdout and "|---|---|---|" in md.stdout
    rows = list(csv.DictReader(io.StringIO(grok("report", g, "-f", "csv").stdout)))
    assert rows[0]["table"] == "every cell" and {r["arm"] for r in rows if r["arm"]} == {"adam", "adamlr"}
    text = grok("report", g, "--plot")
    assert text.returncode == 0 and "every cell" in text.stdout and "adamlr op=mul (n=1)" in text.stdout
    bad = grok("report", g, "--format", "html")
    assert bad.returncode == 2 and "--format must be one of text, markdown, csv" in bad.stderr


def test_paper_plan_sizes_every_claims_sweep() -> None:
    r = grok("sweep", "--preset", "paper", "--plan")
    assert r.returncode == 0, r.stderr
    rows = {ln.split()[0]: ln.split() for ln in r.stdout.splitlines()[1:]}
    assert rows["fig6_optimizers"][1:3] == ["24", "48,000"]  # 2 arms × 4 ops × 3 seeds × 2,000 steps
    for name in ("fig2_embeddings", "fig4_sampling", "fig5_c_sensitivity", "fig7_hessian", "sec43_init"):
        assert name in rows
    assert "total" in rows and "min summed over the" in r.stdout
    # the total rounded as each row's recorded time is (0.1 min), and every row's columns where the header's are
    table = {n: row for n, row in rows.items() if len(row) > 3 and row[1].replace(",", "").isdigit()}
    assert re.fullmatch(r"\d+\.\d", table["total"][3]) and all(float(table[n][3]) for n in table)
    lines = [ln for ln in r.stdout.splitlines() if ln.split()[:1] and (ln.split()[0] in table or ln[:6] == "preset")]
    starts = {ln.index(ln.split()[1]) + len(ln.split()[1]) for ln in lines}
    assert len(starts) == 1, r.stdout  # the members column ends at one place in every row
    one = grok("sweep", "--preset", "skewed_mul", "--plan")
    assert one.returncode == 2 and "has no [sweep] table" in one.stderr


def test_ls_inside_a_group_lists_its_members(lab: Path) -> None:
    r = grok("ls", str(_group(lab)))
    assert r.returncode == 0, r.stderr
    names = [ln.split()[0] for ln in r.stdout.splitlines()[1:]]
    assert names[0] == _group(lab).name and len(names) == 5
    assert [n.split("-")[0] for n in names[1:]] == ["m000", "m001", "m002", "m003"]  # member order


def test_plot_markers_stay_off_the_key() -> None:
    """The key sits above the plot's frame, where no marker's line or letter is drawn (a marker at an early
    step drew its line through a key inside the frame); the markers are in it with their steps."""
    from grok_tui.commands.plot import Chart, Series, render

    steps = [1.0, 10.0, 100.0, 1000.0]
    chart = Chart("run", ["train_acc", "val_acc"], markers=[(2.0, "M"), (500.0, "G")])
    chart.series = [Series("train_acc", steps, [0.1, 1.0, 1.0, 1.0]), Series("val_acc", steps, [0.0, 0.1, 0.5, 1.0])]
    lines = render(chart, True, 1, 60, 16, False).splitlines()
    frame = next(i for i, ln in enumerate(lines) if "┌" in ln)
    assert all("train_acc" not in ln and "val_acc" not in ln for ln in lines[frame:])
    key = " ".join(lines[:frame])
    assert "** train_acc" in key and "++ val_acc" in key and "│ M 2" in key and "│ G 500" in key
    assert len(lines) <= 16 + 2  # the key's rows come out of the plot's height (the x label and ticks below)
