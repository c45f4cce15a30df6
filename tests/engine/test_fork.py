"""`grok fork` in the engine: kept checkpoints, bit-identical forks, lineage, refusals, resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from engine.config import ConfigError
from engine.events import StepsTaken
from engine.rundir.checkpoints import checkpoint_at, list_kept
from engine.rundir.lineage import read_interventions
from engine.train.fork import fork_run
from engine.train.logged import metrics_columns
from engine.train.run import Run
from tests.conftest import logged_rows as metrics
from tests.conftest import logged_tokens as tokens
from tests.conftest import tiny_config


def state(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    return doc


def trained(tmp_path: Path, **over: Any) -> Path:
    run = Run(tiny_config(train__keep_every=20, train__threads=1, **over), tmp_path)
    list(run.events())
    assert run.status == "finished"
    return run.dir


def finish(d: Path) -> Run:
    run = Run.from_checkpoint(d)
    list(run.events())
    assert run.status == "finished"
    return run


def test_kept_checkpoints_every_n_steps(tmp_path: Path) -> None:
    d = trained(tmp_path)
    assert [k.step for k in list_kept(d)] == [20, 40, 60]
    assert all("every" in k.why for k in list_kept(d))
    path, step = checkpoint_at(d, 40)
    assert step == 40 and state(path)["step"] == 40
    with pytest.raises(ConfigError, match="no checkpoint at step 30"):
        checkpoint_at(d, 30)


def test_kept_checkpoints_mark_the_phases(tmp_path: Path) -> None:
    """A run that memorizes keeps a checkpoint at the first checkpoint step at or after M."""
    run = Run(tiny_config(train__keep_every=1000, train__max_steps=400, optim__lr=1e-2), tmp_path)
    list(run.events())
    m = run.summary["memorized_step"]
    assert m is not None, "the tiny run memorizes at lr 1e-2 within 400 steps"
    marked = [k for k in list_kept(run.dir) if "M" in k.why]
    assert len(marked) == 1 and marked[0].step == m  # eval_every (20) is a multiple of the checkpoint step (10)


def test_kept_checkpoints_respect_their_budget(tmp_path: Path) -> None:
    one = trained(tmp_path / "one", train__max_steps=20)
    size = list_kept(one)[0].bytes
    budget_mb = 2.5 * size / 1e6  # room for two, not three
    run = Run(tiny_config(train__keep_every=10, train__keep_budget_mb=budget_mb), tmp_path / "b")
    list(run.events())
    kept = list_kept(run.dir)
    assert [k.step for k in kept] == [50, 60]  # the oldest went
    assert sum(k.bytes for k in kept) <= budget_mb * 1e6
    index = json.loads((run.dir / "checkpoints" / "index.json").read_text())
    assert sorted(index, key=int) == ["50", "60"]


def test_no_change_fork_is_bit_identical(tmp_path: Path, threads: int) -> None:
    """A fork that changes nothing goes on as its parent did: rows, token counts and final state, bit for bit."""
    parent = trained(tmp_path, train__max_steps=100, train__sampler="gradient", optim__name="adamw")
    fork = fork_run(parent, at=40)
    assert metrics(fork) == [r for r in metrics(parent) if int(r["step"]) <= 40]
    finish(fork)
    assert metrics(fork) == metrics(parent)
    assert tokens(fork) == tokens(parent)
    a, b = state(parent / "checkpoint.pt"), state(fork / "checkpoint.pt")
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    for i, s in a["opt"]["state"].items():
        for k, v in s.items():
            assert torch.equal(v, b["opt"]["state"][i][k]), (i, k)
    assert torch.equal(a["rng"], b["rng"])


def test_fork_records_parent_and_a_fork_of_a_fork_both_ancestors(tmp_path: Path) -> None:
    parent = trained(tmp_path)
    child = fork_run(parent, at=20, sets={"optim.lr": "3e-3"}, steps=80)
    run = Run.from_checkpoint(child)
    list(run.events())
    s = json.loads((child / "summary.json").read_text())
    assert s["parent"] == parent.name and s["fork_step"] == 20
    cfg = json.loads((child / "config.json").read_text())
    assert cfg["_meta"]["fork"]["parent"] == parent.name and cfg["optim"]["lr"] == 3e-3
    assert [e["kind"] for e in s["interventions"]] == ["set"] and s["interventions"][0]["target"] == "optim.lr"
    grandchild = fork_run(child, at=60, sets={"optim.weight_decay": "0.01"}, steps=80)
    g = json.loads((grandchild / "summary.json").read_text())
    assert g["parent"] == child.name and g["fork_step"] == 60
    assert g["ancestors"] == [{"run": child.name, "fork_step": 60}, {"run": parent.name, "fork_step": 20}]
    # the inherited intervention first, then its own
    assert [(e["step"], e["target"]) for e in read_interventions(grandchild)] == [
        (20, "optim.lr"),
        (60, "optim.weight_decay"),
    ]


@pytest.mark.parametrize("key", ["data.p=13", "model.d_embed=16", "train.seed=3", "data.op=add"])
def test_unforkable_key_is_refused(tmp_path: Path, key: str) -> None:
    parent = trained(tmp_path)
    k, _, v = key.partition("=")
    with pytest.raises(ConfigError, match=f"^{k}: cannot change mid-run"):
        fork_run(parent, at=20, sets={k: v})
    assert [p.name for p in tmp_path.iterdir()] == [parent.name]  # no directory left behind


def test_optimizer_state_kept_where_layouts_match_and_reset_where_not(tmp_path: Path) -> None:
    parent = trained(tmp_path)
    kept = fork_run(parent, at=40, sets={"optim.lr_ratio": "10", "optim.name": "adamw"})
    reset = fork_run(parent, at=40, sets={"optim.name": "sgd"})
    assert json.loads((kept / "summary.json").read_text())["optimizer_state"].startswith("kept")
    assert json.loads((reset / "summary.json").read_text())["optimizer_state"] == "reset (adam -> sgd)"
    p = state(parent / "checkpoints" / "step-000000040.pt")
    k, r = state(kept / "checkpoint.pt"), state(reset / "checkpoint.pt")
    assert r["opt"]["state"] == {}
    assert torch.equal(p["opt"]["state"][0]["exp_avg"], k["opt"]["state"][0]["exp_avg"])
    run = finish(kept)
    assert run.trainer.opt.param_groups[0]["lr"] == pytest.approx(10 * run.trainer.opt.param_groups[1]["lr"], rel=1e-12)
    assert type(run.trainer.opt).__name__ == "AdamW"
    rows = metrics(kept)
    assert [float(r["lr_ratio"]) for r in rows] == [1.0, 1.0, 1.0, 10.0]  # steps 0, 20, 40 the parent's
    finish(reset)


def test_a_killed_fork_resumes_like_any_run(tmp_path: Path) -> None:
    parent = trained(tmp_path / "p", train__max_steps=100)
    whole = fork_run(parent, at=20, sets={"optim.lr": "2e-3"}, out=tmp_path / "a")
    finish(whole)
    part = fork_run(parent, at=20, sets={"optim.lr": "2e-3"}, out=tmp_path / "b")
    run = Run.from_checkpoint(part)
    for ev in run.events():
        if isinstance(ev, StepsTaken) and ev.step == 50:
            run.stop("interrupted")
    assert json.loads((part / "summary.json").read_text())["status"] == "interrupted"
    assert json.loads((part / "summary.json").read_text())["parent"] == f"../p/{parent.name}"  # relative to b/
    finish(part)
    assert metrics(part) == metrics(whole)
    s = json.loads((part / "summary.json").read_text())
    assert s["parent"] == f"../p/{parent.name}" and s["fork_step"] == 20 and s["status"] == "finished"


def test_a_fork_that_turns_a_probe_on_gains_its_columns(tmp_path: Path) -> None:
    parent = trained(tmp_path)
    fork = fork_run(parent, at=20, sets={"probe.norm_every": "20"})
    header = (fork / "metrics.csv").read_text().splitlines()[0].split(",")
    assert "norm_E" in header and "norm_E" not in (parent / "metrics.csv").read_text().splitlines()[0]
    finish(fork)
    rows = metrics(fork)
    assert [r["norm_E"] != "" for r in rows] == [False, False, True, True]  # steps 0, 20 the parent's; 40, 60
    assert [r["val_acc"] for r in rows[:2]] == [r["val_acc"] for r in metrics(parent)[:2]]


ALL_PROBES = {
    f"probe.{k}_every": 10 for k in ("hessian", "rank", "grad", "fourier", "med", "norm", "update", "progress")
}


@pytest.mark.parametrize(
    "sets",
    [
        {},
        ALL_PROBES,
        {**ALL_PROBES, "probe.hessian_w": "all", "probe.hessian_all": True, "probe.hessian_l2": True},
        {**ALL_PROBES, "model.kind": "transformer"},
        {**ALL_PROBES, "model.freeze_embedding": True},
        {**ALL_PROBES, "data.starve_k": 2, "probe.targets_every": 10},
    ],
)
def test_metrics_columns_from_the_config_are_the_trainers(
    sets: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fork that changes a probe key recolumns metrics.csv from the config: the Trainer's columns, without
    loading the data set or touching torch's threads (neither is called here)."""
    from engine.config import apply_overrides
    from engine.train.trainer import Trainer

    cfg = apply_overrides(tiny_config(), sets)
    want = list(Trainer(cfg).columns)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("metrics_columns must not load data or set threads")

    monkeypatch.setattr(torch, "set_num_threads", refuse)
    monkeypatch.setattr("engine.task.dataset.load_dataset", refuse)
    state = torch.get_rng_state()
    assert metrics_columns(cfg) == want
    assert torch.equal(torch.get_rng_state(), state)  # no random draw either


def test_a_fork_that_changes_a_probes_cadence_starts_it_at_the_fork(tmp_path: Path) -> None:
    """The parent measures norms at 0 and 60 (every 50 steps, evaluations every 20); a fork at 20 that sets
    every 20 measures at its next evaluation, 40, not at the parent's next due step."""
    parent = trained(tmp_path, probe__norm_every=50)
    assert [r["norm_E"] != "" for r in metrics(parent)] == [True, False, False, True]
    fork = fork_run(parent, at=20, sets={"probe.norm_every": "20"})
    finish(fork)
    assert [r["norm_E"] != "" for r in metrics(fork)] == [True, False, True, True]
