"""The batched backend's seam: a batch of members trained as one model writes each member's own run directory."""

from __future__ import annotations

import json
import math
from pathlib import Path

import engine.sweep.batched
import engine.train.loop
from engine.events import EvalLogged, RunFinished
from engine.rundir import load_checkpoint, lock_holder, read_csv, read_summary
from engine.sweep.batched import plan, run_batch
from engine.sweep.events import MemberEnded, MemberStarted, SweepEvent
from engine.sweep.member import MemberSpec
from engine.train.evaluation import RunMetrics
from engine.train.losses import build_loss
from engine.train.trainer import Trainer
from tests.conftest import tiny_config


def test_run_batch_writes_member_run_dirs_and_rows(tmp_path: Path) -> None:
    specs = [MemberSpec(f"m{s:03d}", tiny_config(train__seed=s), str(tmp_path / f"m{s:03d}-s{s}")) for s in (0, 1)]
    assert plan(specs) == [[specs[0]], [specs[1]]]  # the CPU trains members one by one
    seen: list[SweepEvent] = []
    rows = run_batch(specs, seen.append, lambda: False)
    assert [r["member"] for r in rows] == ["m000", "m001"]
    assert [r["run_dir"] for r in rows] == ["m000-s0", "m001-s1"]  # the planned directories
    for spec, row in zip(specs, rows, strict=True):
        d = Path(spec.run_dir)
        assert read_summary(d).status == "finished" == row["status"]
        solo = [ev.row for ev in Trainer(spec.config) if isinstance(ev, EvalLogged)]
        metrics = read_csv(d / "metrics.csv")
        assert [int(r["step"]) for r in metrics] == [r["step"] for r in solo]
        assert math.isclose(float(metrics[-1]["val_acc"]), solo[-1]["val_acc"], abs_tol=1e-6)
    assert MemberStarted("m000", "m000-s0", 60) in seen
    assert [e for e in seen if isinstance(e, MemberEnded)] == [
        MemberEnded("m000", rows[0]),
        MemberEnded("m001", rows[1]),
    ]


def _specs(tmp_path: Path, **over: object) -> list[MemberSpec]:
    return [
        MemberSpec(f"m{s:03d}", tiny_config(train__seed=s, **over), str(tmp_path / f"m{s:03d}-s{s}")) for s in (0, 1)
    ]


def test_a_crashing_batch_fails_every_member_as_a_single_run_fails(tmp_path: Path, monkeypatch) -> None:
    """A fault inside the batched trainer ends each member as `Run` ends: status failed, error.txt, a checkpoint."""
    real = RunMetrics.events

    def crash_at_20(self, step, *a, **kw):
        if step >= 20:
            raise RuntimeError("boom in the evaluation")
        return real(self, step, *a, **kw)

    monkeypatch.setattr(RunMetrics, "events", crash_at_20)
    specs = _specs(tmp_path, train__max_steps=60, train__checkpoint_every=10)
    seen: list[SweepEvent] = []
    rows = run_batch(specs, seen.append, lambda: False)
    for spec, row in zip(specs, rows, strict=True):
        d = Path(spec.run_dir)
        summary = read_summary(d)
        assert summary.status == "failed" == row["status"]
        assert summary.error == "RuntimeError: boom in the evaluation" == row["error"]
        assert (
            "Traceback" in (d / "error.txt").read_text() and "boom in the evaluation" in (d / "error.txt").read_text()
        )
        ckpt = load_checkpoint(d)
        assert ckpt["step"] == 20  # the failure path's own checkpoint, at the step the fault happened
        assert not (d / ".lock").exists() or lock_holder(d) is None  # the lock is released
    assert [e.row["status"] for e in seen if isinstance(e, MemberEnded)] == ["failed", "failed"]


def test_a_nan_in_the_last_steps_ends_batched_members_diverged_as_trainer(tmp_path: Path, monkeypatch) -> None:
    """The final NaN check: a training loss that turns NaN after the last progress check (step 10) and
    before the end (step 15, whose evaluation is finite) makes the run `diverged`, batched as alone."""

    def poisoned_loss(name: str):
        real = build_loss(name)
        calls = [0]

        def loss(logits, y, reduction="mean"):
            out = real(logits, y, reduction=reduction)
            if reduction == "mean":  # a training step (evaluations sum); vmap calls it once per step
                calls[0] += 1
                if calls[0] > 10:
                    out = out + float("nan")  # the value is NaN, the gradient is untouched
            return out

        return loss

    monkeypatch.setattr(engine.train.loop, "build_loss", poisoned_loss)  # the one training step, alone and batched
    over = {"train__max_steps": 15, "train__eval_every": 100}
    solo = [ev for ev in Trainer(tiny_config(**over)) if isinstance(ev, RunFinished)]
    assert solo[0].status == "diverged"
    specs = _specs(tmp_path, **over)
    rows = run_batch(specs, None, lambda: False)
    for spec, row in zip(specs, rows, strict=True):
        assert read_summary(Path(spec.run_dir)).status == "diverged" == row["status"]
        assert row["steps"] == 15


def test_plan_puts_equal_optimizer_settings_side_by_side(tmp_path: Path, monkeypatch) -> None:
    """On a GPU a batch's members are ordered so equal settings are neighbours (one optimizer each run,
    engine/train/optim.py `shared_ranges`); each member keeps its own directory and row."""
    monkeypatch.setattr(engine.sweep.batched, "_wants_batches", lambda cfg: True)
    lrs = (1e-3, 3e-3, 1e-3, 3e-3)
    specs = [
        MemberSpec(f"m{s:03d}", tiny_config(train__seed=s, optim__lr=lr, train__max_steps=20), str(tmp_path / f"m{s}"))
        for s, lr in enumerate(lrs)
    ]
    adaptive = [
        MemberSpec(f"a{s}", tiny_config(train__seed=s, optim__adaptive=True), str(tmp_path / f"a{s}")) for s in (0, 1)
    ]
    assert plan(adaptive[::-1]) == [adaptive[::-1]]  # settings of their own: the order stays
    (batch,) = plan(specs)
    assert [s.id for s in batch] == ["m000", "m002", "m001", "m003"]
    rows = run_batch(batch, None, lambda: False)
    assert [r["member"] for r in rows] == ["m000", "m002", "m001", "m003"]
    for spec, row in zip(batch, rows, strict=True):
        d = Path(spec.run_dir)
        assert row["run_dir"] == d.name
        assert json.loads((d / "config.json").read_text())["optim"]["lr"] == spec.config.optim.lr
        solo = [ev.row for ev in Trainer(spec.config) if isinstance(ev, EvalLogged)]
        metrics = read_csv(d / "metrics.csv")
        assert math.isclose(float(metrics[-1]["train_loss"]), solo[-1]["train_loss"], rel_tol=1e-4)


def test_a_stacked_sweep_gives_each_member_its_solo_results(tmp_path: Path) -> None:
    """A sweep of Fig. 2's one-hot MLP and Adam-LR members (fixed c, adaptive c, a warm-up, three ops), planned
    as stacked models on the CPU (`stack=True`) and trained batch by batch, against each member run alone:
    the same rows' steps and the same results row, floats within REL (a stacked member's matmuls round
    otherwise than its solo run's: batched kernels; tests/engine/test_batched.py), integers exactly."""
    from engine.sweep.member import run_member

    rel = 1e-4
    configs = [
        tiny_config(train__seed=0, model__kind="mlp_onehot"),
        tiny_config(train__seed=1, model__kind="mlp_onehot", optim__weight_decay=0.1),
        tiny_config(train__seed=0, optim__lr_ratio=10.0, data__op="mul"),
        tiny_config(train__seed=1, optim__lr_ratio=10.0, data__op="sub"),
        tiny_config(train__seed=2, optim__adaptive=True, optim__adaptive_every=10),
        tiny_config(train__seed=3, optim__adaptive=True, optim__adaptive_every=10, optim__lr=3e-3),
        tiny_config(train__seed=4, optim__warmup_steps=20, optim__schedule="cosine"),
        tiny_config(train__seed=5, optim__warmup_steps=20, optim__schedule="cosine", optim__lr_ratio=5.0),
    ]
    specs = [MemberSpec(f"m{i:03d}", c, str(tmp_path / "stacked" / f"m{i:03d}")) for i, c in enumerate(configs)]
    batches = plan(specs, stack=True)
    assert sorted(len(b) for b in batches) == [2, 2, 2, 2]  # one-hot; two ops; adaptive c; warm-up and cosine
    stacked = {r["member"]: r for b in batches for r in run_batch(b, None, lambda: False)}
    for spec in specs:
        solo_spec = MemberSpec(spec.id, spec.config, str(tmp_path / "solo" / spec.id))
        solo = run_member(solo_spec, None, lambda: False)
        row = stacked[spec.id]
        assert set(row) == set(solo)
        for k, v in solo.items():
            if k in ("run_dir", "wall_s", "steps_per_s") or "wall" in k:
                continue
            if isinstance(v, float) and not isinstance(row[k], str):
                assert math.isclose(row[k], v, rel_tol=rel, abs_tol=1e-6) or (math.isnan(v) and math.isnan(row[k])), (
                    spec.id,
                    k,
                )
            else:
                assert row[k] == v, (spec.id, k)
        want = read_csv(Path(solo_spec.run_dir) / "metrics.csv")
        got = read_csv(Path(spec.run_dir) / "metrics.csv")
        assert [r["step"] for r in got] == [r["step"] for r in want]
        for a, b in zip(got, want, strict=True):
            assert math.isclose(float(a["val_acc"]), float(b["val_acc"]), abs_tol=1e-6)
            assert math.isclose(float(a["train_loss"]), float(b["train_loss"]), rel_tol=rel)
