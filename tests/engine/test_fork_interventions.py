"""Interventions at a fork touch only their rows or sets; frozen entries stay bit-identical at every step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from engine.config import ConfigError, apply_overrides
from engine.models import build_model
from engine.probes.targets import ring_place
from engine.rundir.checkpoints import list_kept
from engine.rundir.dirs import read_config
from engine.task import data as D
from engine.task.add_pairs import added_pairs
from engine.task.metrics import split_tokens
from engine.train.fork import axis_tokens, fork_run
from engine.train.interventions import parse_intervention, ring_centre
from engine.train.run import Run
from tests.conftest import tiny_config

E = "embedding.weight"
STARVED = {"data.starve_k": 2, "data.starve_m": 1, "data.frac_train": 0.5}
TOL = 1e-6  # relative, on float32 norms


def starved(**over: Any) -> dict[str, Any]:
    return {k.replace(".", "__"): v for k, v in {**STARVED, "train.keep_every": 20, "train.threads": 1}.items()} | over


def trained(root: Path, **over: Any) -> Path:
    run = Run(tiny_config(**starved(**over)), root)
    list(run.events())
    assert run.status == "finished"
    return run.dir


def model_at(path: Path) -> dict[str, torch.Tensor]:
    model: dict[str, torch.Tensor] = torch.load(path, map_location="cpu", weights_only=True)["model"]
    return model


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained(tmp_path_factory.mktemp("parent"))


def targets(run: Path) -> list[int]:
    out = list(split_tokens(read_config(run)).target)
    assert len(out) == 2
    return out


def only_rows_changed(before: dict[str, torch.Tensor], after: dict[str, torch.Tensor], rows: list[int]) -> None:
    """Every parameter but E bit-identical; E's rows outside `rows` bit-identical, its `rows` changed."""
    for k in before:
        if k != E:
            assert torch.equal(before[k], after[k]), k
    others = [t for t in range(before[E].shape[0]) if t not in rows]
    assert torch.equal(before[E][others], after[E][others])
    assert not torch.equal(before[E][rows], after[E][rows])


def fork_weights(parent: Path, tmp_path: Path, spec: str) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    d = fork_run(parent, at=40, interventions=[spec], out=tmp_path)
    return model_at(parent / "checkpoints" / "step-000000040.pt"), model_at(d / "checkpoint.pt")


def test_rescale_to_the_ring_radius_keeps_direction(parent: Path, tmp_path: Path) -> None:
    before, after = fork_weights(parent, tmp_path, "rescale:targets=ring")
    rows = targets(parent)
    only_rows_changed(before, after, rows)
    data = read_config(parent).data
    axis = axis_tokens(data)
    assert axis is not None
    ring = [t for t in axis if t not in rows]
    c = ring_centre(before[E], ring, axis)  # the centre of the ring the other rows form
    radius = float(np.median((before[E][ring].double() - c).norm(dim=1).numpy()))
    off_before, off_after = before[E][rows].double() - c, after[E][rows].double() - c
    assert off_after.norm(dim=1).tolist() == pytest.approx([radius] * len(rows), rel=TOL)
    cos = torch.nn.functional.cosine_similarity(off_before, off_after, dim=1)
    assert cos.tolist() == pytest.approx([1.0] * len(rows), abs=TOL)  # direction from the centre kept
    # the targets probe measures what the intervention set: target_norm = 1 (engine/probes/targets.py)
    pos = {t: i for i, t in enumerate(axis)}
    norm, _, _ = ring_place(
        after[E][axis].double().numpy(), np.arange(len(axis)), np.array([pos[t] for t in rows]), len(axis)
    )
    assert norm == pytest.approx(1.0, rel=1e-5)


def test_rescale_to_the_median_norm_keeps_direction(parent: Path, tmp_path: Path) -> None:
    """median_norm: each row's norm set to the median norm of the other operand rows, from the origin."""
    before, after = fork_weights(parent, tmp_path, "rescale:targets=median_norm")
    rows = targets(parent)
    only_rows_changed(before, after, rows)
    p = read_config(parent).data.p
    others = sorted(before[E][[t for t in range(p) if t not in rows]].norm(dim=1).tolist())
    median = others[(len(others) - 1) // 2]  # the lower of the two middle values, as torch.median
    assert after[E][rows].norm(dim=1).tolist() == pytest.approx([median] * len(rows), rel=TOL)
    cos = torch.nn.functional.cosine_similarity(before[E][rows], after[E][rows], dim=1)
    assert cos.tolist() == pytest.approx([1.0] * len(rows), abs=TOL)


def test_rescale_by_k(parent: Path, tmp_path: Path) -> None:
    before, after = fork_weights(parent, tmp_path, "rescale:targets=x3")
    rows = targets(parent)
    only_rows_changed(before, after, rows)
    ratio = (after[E][rows].norm(dim=1) / before[E][rows].norm(dim=1)).tolist()
    assert ratio == pytest.approx([3.0, 3.0], rel=TOL)


def test_reset_zero_and_explicit_ids(parent: Path, tmp_path: Path) -> None:
    before, after = fork_weights(parent, tmp_path / "reset", "reset:targets")
    rows = targets(parent)
    only_rows_changed(before, after, rows)
    torch.manual_seed(0)
    init = build_model(read_config(parent)).state_dict()[E]
    assert torch.equal(after[E][rows], init[rows])
    before, after = fork_weights(parent, tmp_path / "zero", "zero:3,7")
    only_rows_changed(before, after, [3, 7])
    assert not after[E][[3, 7]].any()


def test_copy_from_a_run_with_the_same_split(parent: Path, tmp_path: Path) -> None:
    other = trained(tmp_path / "other", optim__lr=3e-3)
    rows = targets(parent)
    before, after = fork_weights(parent, tmp_path / "f", f"copy:targets={other}@20")
    only_rows_changed(before, after, rows)
    assert torch.equal(after[E][rows], model_at(other / "checkpoints" / "step-000000020.pt")[E][rows])
    elsewhere = trained(tmp_path / "elsewhere", train__seed=1)
    with pytest.raises(ConfigError, match="another split"):
        fork_run(parent, at=40, interventions=[f"copy:targets={elsewhere}"], out=tmp_path / "g")


@pytest.mark.parametrize("optim", ["adamw", "adam"])
def test_only_target_rows_train_the_rest_bit_identical_at_every_step(parent: Path, tmp_path: Path, optim: str) -> None:
    """only:E[targets] under weight decay: every other entry is the fork step's at every kept step, the rows move."""
    sets = {"optim.name": optim, "optim.weight_decay": "0.5", "train.keep_every": "10", "optim.lr": "1e-2"}
    d = fork_run(parent, at=40, sets=sets, interventions=["only:E[targets]"], steps=100, out=tmp_path)
    list(Run.from_checkpoint(d).events())
    start = model_at(parent / "checkpoints" / "step-000000040.pt")
    rows = targets(parent)
    kept = [k for k in list_kept(d) if k.step > 40]
    assert [k.step for k in kept] == list(range(50, 101, 10))
    for k in kept:
        only_rows_changed(start, model_at(k.path), rows)


def test_freeze_and_unfreeze_a_whole_set(parent: Path, tmp_path: Path) -> None:
    d = fork_run(parent, at=40, sets={"optim.name": "adamw"}, interventions=["freeze:E"], out=tmp_path / "a")
    list(Run.from_checkpoint(d).events())
    start, end = model_at(parent / "checkpoints" / "step-000000040.pt"), model_at(d / "checkpoint.pt")
    assert torch.equal(start[E], end[E])
    assert all(not torch.equal(start[k], end[k]) for k in start if k != E)
    assert read_config(d).train.frozen == "E"
    again = fork_run(d, at=60, interventions=["unfreeze:E"], steps=80, out=tmp_path / "b")
    assert read_config(again).train.frozen == ""
    list(Run.from_checkpoint(again).events())
    assert not torch.equal(model_at(d / "checkpoint.pt")[E], model_at(again / "checkpoint.pt")[E])


def test_added_pairs_hold_the_tokens_and_never_the_test_set(parent: Path, tmp_path: Path) -> None:
    cfg = read_config(parent)
    split = D.make_split(cfg.data, cfg.train.seed)
    pairs = D.operand_pairs(cfg.data)
    fork = fork_run(parent, at=40, sets={"train.add_pairs": "targets"}, out=tmp_path)
    fcfg = read_config(fork)
    add = added_pairs(fcfg)
    rows = targets(parent)
    assert len(add) > 0
    assert not np.isin(add, split.test).any() and not np.isin(add, split.train).any()
    assert np.isin(pairs[add], rows).any(axis=1).all()
    # every pair holding a target is now in training or in the test set
    holds = np.flatnonzero(np.isin(pairs, rows).any(axis=1))
    assert set(holds) <= set(split.test) | set(split.train) | set(add)
    run = Run.from_checkpoint(fork)
    assert len(run.trainer.data[0].x_train) == len(split.train) + len(add)
    assert torch.equal(run.trainer.data[0].x_test, torch.as_tensor(D.tokens(cfg.data, pairs)[split.test]))
    list(run.events())
    assert run.status == "finished"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("grow:targets", "expected KIND:WHAT"),
        ("rescale:targets", "rescale takes =ring, =median_norm or =xK"),
        ("rescale:nobody=ring", "'nobody' is not a token"),
        ("zero:targets=1", "zero takes no =value"),
        ("freeze:W[1]", "rows are taken of E only"),
        ("copy:targets", "copy takes =RUN_DIR"),
    ],
)
def test_bad_intervention_is_one_line(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as e:
        parse_intervention(spec)
    assert "\n" not in str(e.value)


def test_unknown_parameter_name_is_refused(parent: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no parameter 'nothing\.weight'"):
        fork_run(parent, at=40, interventions=["freeze:nothing.weight"], out=tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("m", [3, 0])
def test_added_pairs_capped_at_m_or_the_median_token(parent: Path, m: int) -> None:
    cfg = apply_overrides(read_config(parent), {"train.add_pairs": "targets", "train.add_pairs_m": m})
    split = D.make_split(cfg.data, cfg.train.seed)
    pairs = D.operand_pairs(cfg.data)
    rows = targets(parent)
    before = D.pairs_holding(pairs[split.train], cfg.data.p)
    want = m or int(np.median(np.delete(before, rows)))
    add = added_pairs(cfg)
    assert not np.isin(add, split.test).any()
    after = D.pairs_holding(pairs[np.concatenate([split.train, add])], cfg.data.p)
    # every target reaches m (a pair holding both targets may take one past it), where it has pairs to spare
    spare = D.pairs_holding(pairs[np.setdiff1d(np.arange(len(pairs)), split.test)], cfg.data.p)
    for t in rows:
        assert min(want, spare[t]) <= after[t] <= max(want, before[t]) + 1, (t, before[t], after[t], want)
