"""`grok run`, `grok show`, `grok export` and `grok presets` as a user runs them."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.cli.conftest import grok


def test_run_plain_output_show_and_export(tmp_path: Path, tiny_toml: str) -> None:
    r = grok("run", "--config", tiny_toml, "--seed", "3", "--steps", "40", "--out", str(tmp_path), "--log-every", "1")
    assert r.returncode == 0, r.stderr
    assert "step      20/40" in r.stdout and "val_acc" in r.stdout  # plain lines without a TTY
    assert "run directory:" in r.stdout and "status            finished" in r.stdout
    d = next(tmp_path.glob("*-tiny-s3"))
    cfg = json.loads((d / "config.json").read_text())
    assert cfg["train"]["seed"] == 3 and cfg["train"]["max_steps"] == 40

    s = grok("show", str(d))
    assert s.returncode == 0 and "finished" in s.stdout and "train_acc" in s.stdout

    e = grok("export", str(d), "-o", "-", "--metrics", "train_acc,val_acc")
    assert e.returncode == 0, e.stderr
    rows = list(csv.DictReader(io.StringIO(e.stdout)))
    assert list(rows[0]) == ["run", "preset", "seed", "step", "train_acc", "val_acc"]
    assert [r["step"] for r in rows] == ["0", "20", "40"] and rows[0]["seed"] == "3"

    out = tmp_path / "x" / "tok.csv"
    e = grok("export", str(d), "-o", str(out), "--tokens")
    assert e.returncode == 0 and "wrote 39 rows" in e.stderr
    with open(out) as fh:
        assert next(csv.reader(fh))[:6] == ["run", "preset", "seed", "step", "token", "updates"]

    bad = grok("export", str(d), "--metrics", "nope")
    assert bad.returncode == 2 and "unknown metric" in bad.stderr


def test_export_two_runs(tmp_path: Path, tiny_toml: str) -> None:
    for seed in ("0", "1"):
        r = grok("run", "--config", tiny_toml, "--seed", seed, "--steps", "20", "-q", "--out", str(tmp_path))
        assert r.returncode == 0
    e = grok("export", *map(str, sorted(tmp_path.glob("*"))))
    rows = list(csv.DictReader(io.StringIO(e.stdout)))
    assert {r["seed"] for r in rows} == {"0", "1"} and len(rows) == 4
    e = grok("export", str(tmp_path))  # a directory of runs works too
    assert len(list(csv.DictReader(io.StringIO(e.stdout)))) == 4


def test_presets_list_and_show() -> None:
    r = grok("presets")
    assert r.returncode == 0
    names = [line.split()[0] for line in r.stdout.splitlines()]
    for n in ("skewed_mul", "adamlr_mul", "noembed_add", "balanced_skewed_mul", "gradient_skewed_mul"):
        assert n in names
    r = grok("presets", "adamlr_mul")
    assert r.returncode == 0 and "lr_ratio = 10.0" in r.stdout and "lr = 0.01" in r.stdout


def test_help_is_fast_and_names_commands() -> None:
    r = grok("--help")
    assert r.returncode == 0
    for cmd in ("run", "presets", "show", "export"):
        assert cmd in r.stdout


def test_split_shows_fig8_frequencies() -> None:
    r = grok("split", "--preset", "skewed_a_mul", "--csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == 97
    a = [int(x["train_a"]) for x in rows]
    assert sum(a[:10]) > 3 * sum(a[-10:])  # skewed on a (Fig. 8)
    assert sum(int(x["train_a"]) for x in rows) == 2823
    u = grok("split", "--preset", "uniform_mul", "--csv")
    ua = [int(x["train_a"]) for x in csv.DictReader(io.StringIO(u.stdout))]
    assert max(ua) - min(ua) <= 1
    t = grok("split", "--preset", "skewed_a_mul", "--set", "data.split=skewed_test")
    assert t.returncode == 0, t.stderr
    assert "test" in t.stdout.splitlines()[2]  # the table shows held-out counts beside training counts


def test_a_long_run_directory_gets_a_line_of_its_own(tmp_path: Path, tiny_toml: str) -> None:
    """At 80 columns `run directory: PATH` fits, or the path moves whole to the next line: never cut."""
    out = "d" * 45  # run directory: d...d/<date>-tiny-s0 is 84 columns; the path alone, 71
    r = grok("run", "--config", tiny_toml, "--steps", "20", "--out", out, cwd=tmp_path, env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    (run,) = (tmp_path / out).iterdir()
    lines = r.stdout.splitlines()
    i = lines.index("run directory:")
    assert lines[i + 1] == f"  {out}/{run.name}" and all(len(ln) <= 80 for ln in lines), r.stdout
