"""Engine fixtures: the torch thread counts the determinism promises are checked at, and a tiny trained fork study."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from engine.records.group_dir import Group

# One intra-op thread and two: a CPU reduction split over two threads sums in another order, so the
# promises of tests/engine/test_determinism.py and test_resume.py must hold at each count on its own.
THREADS = (1, 2)


@pytest.fixture(params=THREADS, ids=[f"threads{n}" for n in THREADS])
def threads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """torch's intra-op thread count for the test, restored after it.

    OMP_NUM_THREADS is set too: a run with `train.threads = 0` (auto) keeps it (engine/train/threads.py),
    where it would otherwise reset torch to the suite's one thread.
    """
    monkeypatch.setenv("OMP_NUM_THREADS", str(request.param))
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def fork_group(tmp_path_factory: pytest.TempPathFactory) -> Group:
    """fork_feed_starved at tiny sizes, trained whole (parents, then their forks at step 60): one per test
    module, so a module may rewrite its members' logs."""
    from tests.engine.test_fork_sweep import run_whole, tiny_group

    over = {"train.max_steps": 120, "data.starve_k": 2, "train.keep_every": 20, "data.frac_train": 0.4}
    g = tiny_group(tmp_path_factory.mktemp("forks"), "fork_feed_starved", over, fork_at="60")
    run_whole(g)
    return Group.open(g.dir)
