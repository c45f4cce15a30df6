"""Many runs of one shape trained as one batched model: the step of engine/train/loop.py over stacked members.

`train_many(configs)` yields `(member, event)` pairs; each member sees the same events, metrics and
summary that `Trainer(config)` would give it alone with the same seed (same split, init, sampler draws,
c and probes), up to float rounding: the step, the evaluation and each member's torch optimizer are
`Trainer`'s own, and `member_state_dict(i)` is a `Trainer` checkpoint of member i. Members may differ
in seed, task, lr, c, weight decay, init scale, target rate, decay sets, lazy rows, decay only when
drawn and equal rows; everything that sets a shape must match (`why_not_batched`). A member whose epoch
is weighted has its own epoch length: its last partial batch is padded and masked (engine/train/loop.py
`stack_draws`). Members whose optimizer settings differ step as optimizers of their own, each with its
decay masks and lazy rows over its members' rows (engine/train/decay.py `RowRules`).
"""

from __future__ import annotations

import functools
from collections.abc import Generator
from typing import Any

from engine.config import DataConfig, RunConfig
from engine.events import Event
from engine.task.data import make_split
from engine.train.loop import TrainLoop

# Keys members may differ in; every other key must be equal across the batch.
FREE_KEYS = {
    ("train", "seed"),
    ("data", "op"),
    ("data", "skew"),
    ("optim", "lr"),
    ("optim", "lr_ratio"),
    ("optim", "weight_decay"),
    ("model", "embed_init_scale"),
    ("train", "target_val_acc"),
    ("train", "patience"),
    ("train", "stop_metric"),
    ("train", "target_rate"),  # weighted epochs: each member its own length (a padded, masked last batch)
    ("train", "target_draws_as"),
    ("optim", "decay_sets"),  # the row rules: per optimizer range, masks on the member axis (decay.py)
    ("optim", "lazy_rows"),
    ("optim", "lazy_decay"),
    ("optim", "equal_rows"),
}
FREE_TOP = {"preset", "description"}
# Models whose forward runs under vmap over stacked parameters (engine/train/weights.py StackedModels); the
# one-hot MLP of Fig. 2 is mlp_raw's layers on one-hot inputs.
STACKED_KINDS = ("mlp_embed", "mlp_raw", "mlp_onehot")


@functools.lru_cache(maxsize=4096)
def split_sizes(data: DataConfig, seed: int) -> tuple[int, int]:
    """(train, test) pair counts of this split, as make_split draws it (numpy only, no tensors)."""
    split = make_split(data, seed)
    return len(split.train), len(split.test)


def why_not_batched(cfgs: list[RunConfig]) -> str | None:
    """None if the configs can train as one batched model, else the reason."""
    if not cfgs:
        return "no members"
    c0 = cfgs[0]
    if c0.model.kind not in STACKED_KINDS:
        return f"model.kind {c0.model.kind} is not batched"
    if c0.optim.grokfast_alpha > 0 or c0.optim.grokfast_lambda > 0 or c0.optim.orthogonal:
        return "gradient filters are not batched"
    # One model stacks the members' train and test sets, so they must be the same sizes: asked of the
    # splits themselves, not of the ops (div has p(p-1) pairs, the others p²; a split of another kind
    # or fraction differs too), whichever member comes first.
    sizes = {split_sizes(c.data, c.train.seed) for c in cfgs}
    if len(sizes) > 1:
        return "members' train or test sets differ in size: " + ", ".join(f"{a}/{b}" for a, b in sorted(sizes))

    def shape(c: RunConfig) -> dict[str, Any]:
        d = c.to_dict()
        return {
            g: {k: v for k, v in t.items() if (g, k) not in FREE_KEYS} if isinstance(t, dict) else t
            for g, t in d.items()
            if g not in FREE_TOP
        }

    s0 = shape(c0)
    for c in cfgs[1:]:
        sc = shape(c)
        if sc != s0:
            diff = [f"{g}.{k}" for g, t in s0.items() if isinstance(t, dict) for k in t if sc[g].get(k) != t[k]]
            return f"members differ in {', '.join(diff) or 'shape'}"
    return None


class ManyTrainer(TrainLoop):
    """N members as one model whose parameters carry a leading member axis."""

    def __init__(self, cfgs: list[RunConfig]) -> None:
        reason = why_not_batched(cfgs)
        if reason:
            raise ValueError(f"train_many: {reason}")
        super().__init__(cfgs, stacked=True)


def train_many(cfgs: list[RunConfig]) -> Generator[tuple[int, Event], None, None]:
    """Train the members as one batched model; yields (member index, event)."""
    return ManyTrainer(cfgs).member_events()
