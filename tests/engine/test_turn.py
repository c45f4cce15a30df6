"""turn:TOKENS=random|other|memorized (engine/train/interventions.py _turn): each row's direction from the
ring's centre replaced, its distance from the centre kept."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from engine.config import ConfigError
from engine.config.param_sets import parse_intervention
from engine.rundir import checkpoint_at, list_kept, load_state, read_config
from engine.task.metrics import split_tokens
from engine.train.fork import axis_tokens, fork_run
from engine.train.interventions import ring_centre
from engine.train.run import Run
from tests.conftest import tiny_config

E = "embedding.weight"


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cfg = tiny_config(
        data__starve_k=2, data__starve_m=1, data__frac_train=0.5, train__keep_every=20, train__threads=1,
        train__max_steps=300, optim__lr=0.01,
    )  # fmt: skip
    run = Run(cfg, tmp_path_factory.mktemp("turn"))
    list(run.events())
    assert any("M" in k.why for k in list_kept(run.dir)), "the parent must memorize to keep M"
    return run.dir


def _rows(d: Path, step: int | None = None) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    cfg = read_config(d)
    targets = list(split_tokens(cfg).target)
    Em = load_state(checkpoint_at(d, step)[0])["model"][E].double()
    axis = axis_tokens(cfg.data)
    ring = [t for t in (axis or range(cfg.data.p)) if t not in targets]
    return Em, ring_centre(Em, ring, axis), targets


@pytest.mark.parametrize("where", ["random", "other", "memorized"])
def test_a_turned_row_keeps_its_distance_and_takes_the_direction_named(parent: Path, where: str) -> None:
    at = 300
    before, c0, targets = _rows(parent, at)
    fork = fork_run(parent, at, {"train.max_steps": str(at + 1)}, [f"turn:targets={where}"], out=parent.parent)
    after, c1, _ = _rows(fork)
    rows = torch.tensor(targets)
    torch.testing.assert_close(c1, c0, rtol=1e-5, atol=1e-6)  # the ring is untouched
    d0, d1 = (before[rows] - c0), (after[rows] - c1)
    torch.testing.assert_close(d1.norm(dim=1), d0.norm(dim=1), rtol=1e-5, atol=1e-6)
    u = d1 / d1.norm(dim=1, keepdim=True)
    if where == "memorized":
        m = next(k.step for k in list_kept(parent) if "M" in k.why)
        then, cm, _ = _rows(parent, m)
        want = (then[rows] - cm) / (then[rows] - cm).norm(dim=1, keepdim=True)
        torch.testing.assert_close(u, want, rtol=1e-5, atol=1e-5)
    else:
        cos = (u * d0 / d0.norm(dim=1, keepdim=True)).sum(1)
        assert bool((cos < 0.999).all())  # a direction other than the row's own


def test_turn_takes_a_named_direction() -> None:
    with pytest.raises(ConfigError, match="turn takes"):
        parse_intervention("turn:targets=sideways")
    assert str(parse_intervention("turn:targets=memorized")) == "turn:targets=memorized"


def test_memorized_needs_a_kept_checkpoint_at_m(tmp_path: Path) -> None:
    run = Run(tiny_config(data__starve_k=2, data__starve_m=1, data__frac_train=0.5, train__threads=1), tmp_path)
    list(run.events())
    with pytest.raises(ConfigError, match="no kept checkpoint at memorization"):
        fork_run(run.dir, None, {"train.max_steps": "80"}, ["turn:targets=memorized"])
