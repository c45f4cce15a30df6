"""train.threads = 0 (auto): OMP_NUM_THREADS when set, else the idle cores by the load average, at least 1."""

from __future__ import annotations

import pytest
import torch

from engine.train.threads import apply_threads, by_load, choose_threads, from_env


@pytest.mark.parametrize(
    ("cores", "load", "want"),
    [(2, 0.1, 2), (2, 0.6, 1), (2, 1.4, 1), (2, 7.0, 1), (8, 3.2, 5), (8, 0.0, 8), (1, 0.0, 1)],
)
def test_auto_takes_the_idle_cores(cores: int, load: float, want: int) -> None:
    choice = by_load(cores, load)
    assert choice.threads == want
    assert f"{cores} usable cores" in choice.reason and f"{load:.1f}" in choice.reason


def test_without_a_load_average_auto_takes_every_core() -> None:
    assert by_load(4, None).threads == 4


def test_omp_num_threads_wins_over_the_load() -> None:
    assert from_env({"OMP_NUM_THREADS": "3"}) is not None
    assert from_env({"OMP_NUM_THREADS": "3"}).threads == 3  # type: ignore[union-attr]
    assert from_env({"OMP_NUM_THREADS": ""}) is None
    assert from_env({"OMP_NUM_THREADS": "x"}) is None
    assert from_env({}) is None


def test_a_set_count_is_used_as_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert choose_threads(3).threads == 3
    assert choose_threads(0).threads == 1
    before = torch.get_num_threads()
    try:
        assert apply_threads(2).threads == 2
        assert torch.get_num_threads() == 2
        apply_threads(0)
        assert torch.get_num_threads() == 1  # auto with OMP_NUM_THREADS=1
    finally:
        torch.set_num_threads(before)
