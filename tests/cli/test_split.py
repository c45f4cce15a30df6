"""`grok split`: per-token train/test counts, absent tokens, batch presence and the coverage ceiling."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from engine.config import DataConfig
from engine.task import data as D
from tests.cli.conftest import grok

STARVE = ("--preset", "random_mul", "--set", "data.starve_k=10", "--set", "data.starve_m=0")


def test_split_csv_counts_both_operands() -> None:
    r = grok("split", *STARVE, "--csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == 97
    assert all(int(x["train"]) <= int(x["train_a"]) + int(x["train_b"]) for x in rows)  # (t, t) once
    assert sum(int(x["train_a"]) for x in rows) == 2823
    assert sum(float(x["draw_share"]) for x in rows) == pytest.approx(1.0, abs=1e-4)
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
    assert "batch 512, shuffled epochs: the rarest token is in 0.0% of batches" in r.stdout


def test_split_bad_key_is_one_error_line() -> None:
    r = grok("split", "--preset", "random_mul", "--set", "data.skew_on=c")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "data.skew_on" in r.stderr


def test_split_train_and_test_columns_count_pairs_holding_a_token_once() -> None:
    r = grok("split", "--preset", "random_mul", "--csv", "--draws", "0")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    cfg = DataConfig(op="mul")
    s, pairs = D.make_split(cfg, 0), D.operand_pairs(cfg)
    assert [int(x["train"]) for x in rows] == D.pairs_holding(pairs[s.train], 97).tolist()
    assert [int(x["test"]) for x in rows] == D.pairs_holding(pairs[s.test], 97).tolist()


def test_split_prints_the_target_tokens_m_and_realized_draw_rate() -> None:
    """Issue 22: a starved, rate-weighted config shows m and the draw rate of the targets as realized."""
    r = grok("split", "--preset", "decouple", "--set", "data.starve_m=3", "--set", "train.target_rate=0.1")
    assert r.returncode == 0, r.stderr
    targets = D.starved_tokens(DataConfig(op="mul", starve_k=10, starve_m=3), 0)
    assert (
        f"targets: 10 tokens {' '.join(map(str, targets))}; training pairs m per target: " + ", ".join(["3"] * 10)
        in r.stdout
    )
    line = next(x for x in r.stdout.splitlines() if x.startswith("draw rate r = 0.1 (set)"))
    ratio = float(line.rsplit("ratio ", 1)[1].rstrip(")"))
    assert 0.001 < ratio < 0.05  # 3 pairs at a tenth of the rate against the median's ~58 pairs
    realized = next(x for x in r.stdout.splitlines() if x.startswith("realized over 1000 steps"))
    assert float(realized.rsplit("ratio ", 1)[1].rstrip(")")) == pytest.approx(ratio, rel=0.3)
    matched = grok("split", "--preset", "decouple", "--set", "data.starve_m=1", "--set", "train.target_rate=0")
    assert "(matched)" in matched.stdout and "(ratio 1.000)" in matched.stdout


@pytest.mark.parametrize("sampler", ["balanced", "balanced_epochs", "replacement", "gradient"])
def test_split_measures_every_samplers_draw_shares(sampler: str) -> None:
    r = grok("split", "--preset", "skewed_mul", "--set", f"train.sampler={sampler}", "--csv", "--draws", "200")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    share = np.array([float(x["draw_share"]) for x in rows])
    assert share.sum() == pytest.approx(1.0, abs=1e-4) and share.min() > 0
