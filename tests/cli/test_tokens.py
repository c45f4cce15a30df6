"""`grok tokens RUN`: each token's learned step against its training pairs (issue 22, per-token Fig. 4)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from engine.config import from_dict
from engine.rundir import learned_step, read_csv
from engine.task import data as D
from tests.cli.conftest import grok


def _run(tmp_path: Path, tiny_toml: str, *sets: str) -> Path:
    args = ["run", "--config", tiny_toml, "--steps", "60", "--out", str(tmp_path), "-q"]
    for s in ("optim.lr=0.01", "train.eval_every=10", *sets):
        args += ["--set", s]
    r = grok(*args)
    assert r.returncode == 0, r.stderr
    return next(tmp_path.glob("*-tiny-s0"))


def test_tokens_table_matches_the_run_directory(tmp_path: Path, tiny_toml: str) -> None:
    d = _run(tmp_path, tiny_toml, "data.starve_k=2", "data.starve_m=1")
    r = grok("tokens", str(d), "--csv")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == 11
    summary = json.loads((d / "summary.json").read_text())
    cfg = from_dict(json.loads((d / "config.json").read_text()))
    pairs = D.operand_pairs(cfg.data)[D.make_split(cfg.data, 0).train]
    holding = D.pairs_holding(pairs, 11)
    by_token = {int(x["token"]): x for x in rows}
    targets = D.starved_tokens(cfg.data, 0).tolist()
    for t in range(11):
        assert int(by_token[t]["train_pairs"]) == holding[t]
        want = summary["learned_step"][t]
        assert by_token[t]["learned_step"] == ("" if want is None else str(want))
        assert ("target" in by_token[t]["role"]) == (t in targets)
    assert [int(x["train_pairs"]) for x in rows] == sorted(holding.tolist())  # sorted by training pairs
    # the summary's learned steps are the ones tokens.csv gives
    toks = read_csv(d / "tokens.csv")
    for t in range(11):
        mine = [x for x in toks if int(x["token"]) == t]
        assert summary["learned_step"][t] == learned_step(
            [int(x["step"]) for x in mine], [float(x["val_acc"]) if x["val_acc"] else float("nan") for x in mine]
        )
    text = grok("tokens", str(d), "--plot")
    assert text.returncode == 0 and "learned:" in text.stdout and "learned step against training pairs" in text.stdout


def test_tokens_recomputes_learned_steps_for_a_run_without_them(tmp_path: Path, tiny_toml: str) -> None:
    d = _run(tmp_path, tiny_toml)
    summary = json.loads((d / "summary.json").read_text())
    want = summary.pop("learned_step")
    (d / "summary.json").write_text(json.dumps(summary))
    rows = list(csv.DictReader(io.StringIO(grok("tokens", str(d), "--csv").stdout)))
    got = {int(x["token"]): (int(x["learned_step"]) if x["learned_step"] else None) for x in rows}
    assert [got[t] for t in range(11)] == want


def test_tokens_on_a_bad_directory_is_one_error_line(tmp_path: Path) -> None:
    r = grok("tokens", str(tmp_path))
    assert r.returncode == 2 and r.stderr.strip().startswith("error:") and len(r.stderr.strip().splitlines()) == 1
