"""The batched trainer carries every feature the paper's sweeps use, each member equal to its solo run.

One test per feature that batching once left out: the balanced and gradient samplers, adaptive c, the
rare-token and per-token accuracies, the probes (ranks, norms, Fourier, gradient norms, MED, update ratio,
and the Hessian looped per member), an lr schedule, StableMax, and a checkpoint per member that a solo
`Trainer` continues from.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import torch

from engine.config import RunConfig
from engine.events import EvalLogged, Event, FourierLogged, RunFinished, TokensLogged
from engine.train.loop import TrainLoop
from engine.train.many import ManyTrainer, train_many
from engine.train.trainer import Trainer
from tests.conftest import tiny_config

CLOCK = {"wall_s"}


def collect(events: Iterable[tuple[int, Event]], n: int) -> list[dict[str, Any]]:
    """Per member: metrics rows, TokensLogged events, Fourier spectra, summary."""
    out: list[dict[str, Any]] = [{"rows": [], "tokens": [], "fourier": [], "summary": {}} for _ in range(n)]
    for i, ev in events:
        if isinstance(ev, EvalLogged):
            out[i]["rows"].append(ev.row)
        elif isinstance(ev, TokensLogged):
            out[i]["tokens"].append(ev)
        elif isinstance(ev, FourierLogged):
            out[i]["fourier"].append(ev.norms)
        elif isinstance(ev, RunFinished):
            out[i]["summary"] = ev.summary.doc()
    return out


def solo(cfg: RunConfig) -> dict[str, Any]:
    return collect(((0, ev) for ev in Trainer(cfg)), 1)[0]


def close(a: float | None, b: float | None, rel: float = 1e-4, abs_: float = 1e-5) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def assert_member_is_solo(member: dict[str, Any], alone: dict[str, Any], rel: float = 1e-4) -> None:
    assert [r["step"] for r in member["rows"]] == [r["step"] for r in alone["rows"]]
    for m, s in zip(member["rows"], alone["rows"], strict=True):
        assert set(m) == set(s)
        for k in set(s) - CLOCK:
            assert close(m[k], s[k], rel), (s["step"], k, m[k], s[k])
    for m, s in zip(member["tokens"], alone["tokens"], strict=True):
        assert m.updates == s.updates  # the same batches, in the same order
        for field in ("val_acc", "grad_norm"):
            a, b = getattr(m, field), getattr(s, field)
            assert (a is None) == (b is None), field
            if a is not None:
                assert all(close(x, y, rel) for x, y in zip(a, b, strict=True)), field
    assert len(member["fourier"]) == len(alone["fourier"])
    for a, b in zip(member["fourier"], alone["fourier"], strict=True):
        assert all(close(x, y, rel) for x, y in zip(a, b, strict=True))
    for k in ("status", "steps", "memorized_step", "generalized_step"):
        assert member["summary"][k] == alone["summary"][k], k


def check(cfgs: list[RunConfig], rel: float = 1e-4) -> list[dict[str, Any]]:
    many = collect(train_many(cfgs), len(cfgs))
    for cfg, member in zip(cfgs, many, strict=True):
        assert_member_is_solo(member, solo(cfg), rel)
    return many


@pytest.mark.parametrize("sampler", ["balanced", "gradient"])
def test_samplers(sampler):
    over = {"train__sampler": sampler, "train__max_steps": 40}
    check([tiny_config(train__seed=0, **over), tiny_config(train__seed=1, optim__lr_ratio=4.0, **over)])


def test_adaptive_ratio():
    over = {"optim__adaptive": True, "optim__adaptive_every": 10, "train__max_steps": 40, "train__eval_every": 10}
    many = check([tiny_config(train__seed=0, **over), tiny_config(train__seed=2, **over)])
    ratios = [r["lr_ratio"] for r in many[0]["rows"]]
    assert len(set(ratios)) > 1  # c moved, in both the member and its solo run
    assert all(math.isfinite(r["f_E"]) for r in many[0]["rows"][1:])


def test_rare_and_per_token_accuracy():
    over = {"data__split": "skewed", "probe__rare_k": 3, "train__max_steps": 40}
    many = check([tiny_config(train__seed=0, **over), tiny_config(train__seed=1, **over)])
    row = many[0]["rows"][-1]
    assert math.isfinite(row["val_acc_rare"]) and math.isfinite(row["val_acc_common"])
    assert many[0]["tokens"][-1].val_acc is not None


def test_cheap_probes():
    probes = {f"probe__{k}_every": 20 for k in ("rank", "norm", "fourier", "grad", "med", "update")}
    many = check([tiny_config(train__seed=s, **probes) for s in (0, 1)])
    row = many[1]["rows"][-1]
    for col in ("sigma_E", "sigma_ratio", "rank_EW", "norm_all", "fourier_top", "med", "update_ratio"):
        assert math.isfinite(row[col]), col
    assert many[1]["tokens"][-1].grad_norm is not None


def test_hessian_per_member():
    over = {"probe__hessian_every": 20, "probe__hessian_batch": 32, "train__max_steps": 40}
    many = check([tiny_config(train__seed=s, **over) for s in (0, 3)], rel=1e-3)
    assert many[0]["rows"][-1]["hess_E"] != many[1]["rows"][-1]["hess_E"]


def test_lr_schedule_and_stablemax():
    over = {"optim__warmup_steps": 10, "optim__schedule": "cosine", "train__loss": "stablemax", "train__max_steps": 40}
    check([tiny_config(train__seed=0, **over), tiny_config(train__seed=1, optim__lr=3e-3, **over)])


@pytest.mark.parametrize("optim", ["adam", "sgd"])
def test_member_checkpoint_continues_as_solo_run(optim):
    """A member's checkpoint at step 20 continued by a solo Trainer gives the solo run's later rows."""
    over = {"optim__name": optim, "train__sampler": "gradient", "probe__update_every": 20, "train__max_steps": 20}
    cfgs = [tiny_config(train__seed=s, **over) for s in (0, 1)]
    trainer = ManyTrainer(cfgs)
    assert trainer.ranges == [(0, 2)]  # equal settings: one optimizer over both members' rows
    for _ in trainer.member_events():
        pass
    longer = tiny_config(train__seed=1, **{**over, "train__max_steps": 60})
    resumed = [ev.row for ev in Trainer(longer, state=trainer.member_state_dict(1)) if isinstance(ev, EvalLogged)]
    straight = [ev.row for ev in Trainer(longer) if isinstance(ev, EvalLogged)]
    assert [r["step"] for r in resumed] == [40, 60]
    for r, s in zip(resumed, straight[-2:], strict=True):
        for k in set(s) - CLOCK:
            assert close(r[k], s[k]), (s["step"], k, r[k], s[k])


def test_batched_sweep_members_resume_from_their_checkpoints(tmp_path):
    """run_batch leaves a checkpoint in each member's directory; `Run.from_checkpoint` continues it alone."""
    from engine.rundir import read_metrics
    from engine.sweep.batched import run_batch
    from engine.sweep.member import MemberSpec
    from engine.train.run import Run

    short = [tiny_config(train__seed=s, train__max_steps=20) for s in (0, 1)]
    specs = [MemberSpec(f"m{i}", c, str(tmp_path / f"m{i}")) for i, c in enumerate(short)]
    run_batch(specs, None, lambda: False)
    for spec in specs:
        run = Run.from_checkpoint(spec.run_dir, max_steps=60)
        for _ in run.events():
            pass
        rows = read_metrics(Path(spec.run_dir))
        straight = solo(tiny_config(train__seed=spec.config.train.seed, train__max_steps=60))["rows"]
        assert [int(r["step"]) for r in rows] == [r["step"] for r in straight]
        for r, s in zip(rows, straight, strict=True):
            assert close(r["val_loss"], s["val_loss"]) and close(r["train_acc"], s["train_acc"]), r["step"]


def test_interleaved_settings_step_as_one_optimizer_each_when_side_by_side():
    """Members with settings A, B, A, B keep their order and an optimizer each; regrouped A, A, B, B
    they step as two optimizers, and each member is still its solo run."""
    a, b = {"optim__lr": 1e-3}, {"optim__lr": 3e-3, "optim__lr_ratio": 2.0}
    interleaved = [tiny_config(train__seed=s, train__max_steps=40, **o) for s, o in enumerate((a, b, a, b))]
    assert ManyTrainer(interleaved).ranges == [(0, 1), (1, 2), (2, 3), (3, 4)]
    side_by_side = [interleaved[i] for i in (0, 2, 1, 3)]
    trainer = ManyTrainer(side_by_side)
    assert trainer.ranges == [(0, 2), (2, 4)] and len(trainer.opts) == 2
    check(side_by_side)


def test_adaptive_members_keep_an_optimizer_each():
    """An adaptive c is recomputed from each member's own E (Prop. 4.1): never shared."""
    cfgs = [tiny_config(train__seed=s, optim__adaptive=True) for s in range(3)]
    assert ManyTrainer(cfgs).ranges == [(0, 1), (1, 2), (2, 3)]


def test_one_member_keeps_its_own_optimizer():
    """N = 1 (a single run, or a batch of one) steps the optimizer of the member's own module, as before."""
    cfg = tiny_config()
    for loop in (Trainer(cfg), ManyTrainer([cfg])):
        assert loop.ranges == [(0, 1)] and len(loop.opts) == 1
        own = list(loop.weights.module(0).parameters())
        assert [id(p) for g in loop.opts[0].param_groups for p in g["params"]] == [id(p) for p in own]


def _run_to(trainer: TrainLoop, step: int) -> None:
    for _, ev in trainer._loop():
        if getattr(ev, "step", -1) >= step and not isinstance(ev, EvalLogged):
            return


@pytest.mark.parametrize("optim", ["adam", "adamw", "sgd"])
def test_shared_optimizer_member_state_is_the_solo_optimizers(optim):
    """A member's optimizer state, sliced from its range's, has the format and the values of its solo
    run's optimizer at the same step: the same groups (lr in force included) and state entries."""
    over = {"optim__name": optim, "optim__warmup_steps": 30, "train__max_steps": 20, "train__eval_every": 10}
    cfgs = [tiny_config(train__seed=s, **over) for s in (0, 1, 2)]
    many = ManyTrainer(cfgs)
    assert many.ranges == [(0, 3)]
    _run_to(many, 20)
    got = many.member_state_dict(1)["opt"]
    alone = Trainer(cfgs[1])
    _run_to(alone, 20)
    want = alone.member_state_dict(0)["opt"]
    assert got["param_groups"] == want["param_groups"]
    assert set(got["state"]) == set(want["state"])
    for k, entry in want["state"].items():
        assert set(got["state"][k]) == set(entry)
        for key, v in entry.items():
            assert got["state"][k][key].shape == v.shape, key
            assert torch.allclose(got["state"][k][key], v, rtol=1e-4, atol=1e-6), key


def test_member_state_slices_any_per_row_key_and_rejects_an_unknown_shape():
    """A state key torch may add later is sliced by its leading member axis, or copied if 0-dim;
    a tensor without that axis is refused rather than written into a member's checkpoint."""
    cfgs = [tiny_config(train__seed=s, train__max_steps=10) for s in (0, 1, 2)]
    many = ManyTrainer(cfgs)
    _run_to(many, 10)
    opt = many.opts[0]
    p = opt.param_groups[1]["params"][0]
    opt.state[p]["future_rows"] = torch.arange(3.0)
    opt.state[p]["future_scalar"] = torch.tensor(7.0)
    entry = many.member_state_dict(2)["opt"]["state"][len(opt.param_groups[0]["params"])]
    assert entry["future_rows"].item() == 2.0 and entry["future_scalar"].item() == 7.0
    opt.state[p]["future_rows"] = torch.zeros(5)
    with pytest.raises(ValueError, match="future_rows"):
        many.member_state_dict(0)
