"""Members that once trained alone stack, each equal to its solo run (engine/train/many.py): weighted epochs,
each with its own length; and members whose decay sets, lazy rows, decay only when drawn or equal rows
differ, each optimizer with its masks on the member axis."""

from __future__ import annotations

import torch

from engine.train.many import why_not_batched
from engine.train.weights import stack_draws
from tests.conftest import tiny_config
from tests.engine.test_batched_features import check

STARVED = {"data__starve_k": 2, "optim__weight_decay": 0.1}


def test_a_short_batch_is_padded_with_its_own_first_row_and_masked() -> None:
    idx, mask, lengths = stack_draws([torch.tensor([4, 5, 6]), torch.tensor([7])])
    assert idx.tolist() == [[4, 5, 6], [7, 7, 7]] and lengths == [3, 1]
    assert mask is not None and mask.tolist() == [[True, True, True], [True, False, False]]
    assert stack_draws([torch.tensor([1, 2]), torch.tensor([3, 4])])[1] is None  # equal batches: no mask


def test_weighted_epochs_stack_each_with_its_own_length() -> None:
    """balanced_epochs and train.target_rate: each seed's epoch has its own length, and its last, partial
    batch too (5 and 5, then 1 and 5 rows at p = 11, batch 16), so the stack pads and masks it."""
    balanced = [tiny_config(train__sampler="balanced_epochs", train__seed=s) for s in (0, 1)]
    rates = [tiny_config(train__target_rate=r, train__seed=s, **STARVED) for s, r in ((0, 0.01), (1, 3.0), (2, 1.0))]
    for cfgs in (balanced, rates):
        assert why_not_batched(cfgs) is None
        check(cfgs)


def test_members_that_differ_in_decay_settings_stack() -> None:
    cfgs = [
        tiny_config(train__seed=0, **STARVED),
        tiny_config(train__seed=1, optim__decay_sets="E[targets]=0", **STARVED),
        tiny_config(train__seed=2, optim__lazy_rows=True, **STARVED),
        tiny_config(train__seed=3, optim__lazy_decay=True, **STARVED),
        tiny_config(train__seed=4, optim__lazy_rows=True, **STARVED),  # beside another: one optimizer of two
        tiny_config(train__seed=5, optim__equal_rows=True, **STARVED),
    ]
    assert why_not_batched(cfgs) is None
    check(cfgs)


def test_equal_rows_members_of_two_tasks_equalize_each_on_its_own_axis() -> None:
    """Equal settings but another op: the rows lie on another group axis, so another optimizer's rules."""
    cfgs = [
        tiny_config(train__seed=s, data__op=op, optim__equal_rows=True, **STARVED)
        for s, op in enumerate(("add", "mul"))
    ]
    check(cfgs)
