"""`grok report` on a real tiny sweep: final values with intervals, paired tests, --tail and --metrics."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.cli.conftest import grok
from tests.cli.test_errors import assert_user_error

SWEEP = """\
description = "two arms, three seeds"
[data]
p = 11
op = "add"
[model]
d_embed = 8
[train]
batch_size = 16
max_steps = 40
eval_every = 10
device = "cpu"
checkpoint_every = 40
[sweep]
seeds = 3
compare = "adam"
[sweep.arms.adam]
"optim.lr_ratio" = 1.0
[sweep.arms.adamlr]
"optim.lr_ratio" = 10.0
"""


@pytest.fixture(scope="module")
def group(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep")
    toml = out / "s.toml"
    toml.write_text(SWEEP)
    r = grok("sweep", "--config", str(toml), "--workers", "1", "--out", str(out), timeout=300)
    assert r.returncode == 0, r.stderr
    (g,) = [p for p in out.iterdir() if p.name.endswith("-sweep")]
    return g


def test_report_intervals_and_paired_tests(group: Path) -> None:
    r = grok("report", str(group), "--tail", "2")
    assert r.returncode == 0, r.stderr
    title = (
        "final value (mean of the last 2 evaluations): mean over seeds, (min–max) below 8 seeds, "
        "[95% t-interval] from 8"
    )
    assert title in r.stdout
    assert "steps to 95% val: median [IQR]" in r.stdout and "stopped at" in r.stdout and "40 of 40" in r.stdout
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("val_acc: adamlr - adam = ")]
    assert " (range " in line and "seeds higher, sign p " in line and "Wilcoxon p" in line and line.endswith("(n=3)")
    assert "n=3" in r.stdout
    assert "CI" not in r.stdout and "bootstrap" not in r.stdout  # 3 seeds: a range, never an interval


def test_report_metrics_and_tail_change_the_numbers(group: Path) -> None:
    r1 = grok("report", str(group), "--tail", "1", "--metrics", "train_acc", "--format", "csv")
    r4 = grok("report", str(group), "--tail", "4", "--metrics", "train_acc", "--format", "csv")
    assert r1.returncode == 0 and r4.returncode == 0, r1.stderr + r4.stderr
    assert "train_acc_lo" in r1.stdout and "val_acc_lo" not in r1.stdout
    assert r1.stdout != r4.stdout  # the first evaluations are averaged in with --tail 4


def test_report_max_is_the_members_largest_value(group: Path) -> None:
    import csv
    import io

    r = grok("report", str(group), "--tail", "1", "--metrics", "train_loss,max:train_loss", "--format", "csv")
    assert r.returncode == 0, r.stderr
    rows = [x for x in csv.DictReader(io.StringIO(r.stdout)) if x["table"].startswith("final value")]
    assert len(rows) == 2 and "max:COL is the member's largest COL" in rows[0]["table"]
    for row in rows:  # the loss falls from its initial ln(11): the largest value is the first, above the last
        assert float(row["max:train_loss"]) > float(row["train_loss"])
        assert float(row["max:train_loss"]) == pytest.approx(math.log(11), abs=0.3)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--tail", "0"], "--tail must be >= 1"),
        (["--metrics", "nope"], "no member logged nope"),
        (["--metrics", "max:nope"], "no member logged max:nope"),
        (["--seeds", "x"], "--seeds: expected comma-separated integers"),
        (["--seeds", "7"], "the group's seeds are 0, 1, 2"),
    ],
)
def test_report_option_errors(group: Path, args: list[str], needle: str) -> None:
    assert_user_error(grok("report", str(group), *args), needle)


def test_report_seeds_leaves_the_other_seeds_out(group: Path) -> None:
    import csv
    import io

    def finals(*args: str) -> list[dict[str, str]]:
        r = grok("report", str(group), "--tail", "1", "--metrics", "val_acc", "--format", "csv", *args)
        assert r.returncode == 0, r.stderr
        return [x for x in csv.DictReader(io.StringIO(r.stdout)) if x["table"].startswith("final value")]

    every, one, two = finals(), finals("--seeds", "1"), finals("--seeds", "0,2")
    assert [r["val_acc_n"] for r in every] == ["3", "3"]
    assert [r["val_acc_n"] for r in one] == ["1", "1"] and [r["val_acc_n"] for r in two] == ["2", "2"]
    for a, b, c in zip(every, one, two, strict=True):  # the three seeds' mean from the two views
        assert float(a["val_acc"]) == pytest.approx((float(b["val_acc"]) + 2 * float(c["val_acc"])) / 3, abs=1e-9)
