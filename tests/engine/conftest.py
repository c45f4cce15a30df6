"""Engine fixtures: the torch thread counts the determinism promises are checked at."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

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
