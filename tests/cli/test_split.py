"""`grok split`: per-token train/test counts, absent tokens, batch presence and the coverage ceiling."""

from __future__ import annotations

import csv
import io

from tests.cli.conftest import grok

STARVE = ("--preset", "random_mul", "--set", "data.starve_k=10", "--set", "data.starve_m=0")


def test_split_csv_counts_both_operands() -> None:
    r = grok("split", *STARVE, "--csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == 97
    assert all(int(x["train"]) == int(x["train_a"]) + int(x["train_b"]) for x in rows)
    assert sum(int(x["train_a"]) for x in rows) == 2823 and sum(int(x["test"]) for x in rows) == 2 * 1882
    starved = [x for x in rows if int(x["train"]) == 0]
    assert len(starved) == 10 and all(float(x["batch_presence"]) == 0 for x in starved)
    assert min(float(x["batch_presence"]) for x in rows if int(x["train"]) > 0) > 0.99


def test_split_summary_names_absent_tokens_and_the_coverage_ceiling() -> None:
    r = grok("split", *STARVE)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "10 tokens starved" in lines[0]
    assert "absent from training: 10 tokens 7 11 13 21 25 36 41 55 83 86" in r.stdout
    assert "coverage ceiling: 0.810" in r.stdout
    assert "batch 512: the rarest token is in 0.0% of batches" in r.stdout


def test_split_bad_key_is_one_error_line() -> None:
    r = grok("split", "--preset", "random_mul", "--set", "data.skew_on=c")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "data.skew_on" in r.stderr
