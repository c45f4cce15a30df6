"""How many sweep members one stacked model holds on a GPU: one member's bytes against the card's free memory.

A stacked model (engine/train/many.py) carries every member's parameters, gradients and optimizer state, and
its training batch's activations, side by side; the evaluation and the probes run a bounded number of
rows at a time (engine/train/weights.py EVAL_ROWS, one member's probe after another), a cost per batch, not per
member. `members_that_fit` divides a stated share of the free memory by the member's bytes, and caps it.
The functions take bytes, so they are tested on the CPU; only `free_bytes` asks a card.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.config import RunConfig

# Of the card's free bytes when the sweep is planned, the share its stacked models may use, shared by
# the batches that train at once (one per worker). The rest is left to what the estimate does not
# count: each worker's CUDA context and cuBLAS workspace, the caching allocator's rounding and free
# blocks, the CUDA graph's private pool (a second copy of the step's temporaries).
MEMORY_FRACTION = 0.5
# Members per batch on a card, at most: bench/gpu_speed.py many on the H200 gave 9,366-12,310 model-steps/s at
# N = 128 against 9,196-10,952 at N = 32 (docs/PERFORMANCE.md), so past 128 a batch grows the step's time
# with no measured gain, and a sweep that stops most members early wastes the rest of a longer batch.
MAX_MEMBERS = 128
CPU_MEMBERS = 32  # members per batch when a CPU sweep is asked to stack (the tests): the size before cards
ACTIVATION_FACTOR = 2  # backward holds a gradient beside each saved activation, of its shape at most
PROGRESS_TABLES = 6  # (n², C) float64 tables alive at once in the progress probe (engine/probes/progress.py)


@dataclass(frozen=True)
class MemberBytes:
    """One member's bytes on the card, by what holds them."""

    params: int  # its parameters (float32)
    grads: int  # their gradients
    optimizer: int  # Adam and AdamW: two moments per parameter; SGD with momentum: one buffer
    activations: int  # saved for backward on one training batch, times ACTIVATION_FACTOR
    data: int  # its train and test sets on the device (int64 tokens and labels)

    @property
    def total(self) -> int:
        return self.params + self.grads + self.optimizer + self.activations + self.data


def _saved_bytes(cfg: RunConfig, rows: int) -> int:
    """Bytes the forward pass and loss save for backward on `rows` examples, counted on the meta device
    (shapes only: no memory, no arithmetic, no draw from the random stream)."""
    import torch
    from torch.nn import functional as F

    from engine.train.footprint import meta_model

    model = meta_model(cfg)
    with torch.device("meta"):
        x = torch.zeros(rows, cfg.data.seq_len, dtype=torch.long)
        seen: dict[int, int] = {}

        def pack(t: torch.Tensor) -> torch.Tensor:
            seen[id(t)] = t.numel() * t.element_size()  # a tensor saved twice is held once
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            F.cross_entropy(model(x), torch.zeros(rows, dtype=torch.long))
    return sum(seen.values())


def member_bytes(cfg: RunConfig) -> MemberBytes:
    """The estimate of one member's bytes on the card (float32 weights, as the engine trains them)."""
    from engine.train.footprint import parameter_count
    from engine.train.many import split_sizes

    n = parameter_count(cfg)
    states = {"adam": 2, "adamw": 2, "sgd": 1 if cfg.optim.momentum > 0 else 0}[cfg.optim.name]
    n_train, n_test = split_sizes(cfg.data, cfg.train.seed)
    batch = cfg.train.batch_size or n_train  # 0: the whole training set
    return MemberBytes(
        params=4 * n,
        grads=4 * n,
        optimizer=4 * n * states,
        activations=ACTIVATION_FACTOR * _saved_bytes(cfg, batch),
        data=8 * (n_train + n_test) * (cfg.data.seq_len + 1),
    )


def batch_bytes(cfg: RunConfig) -> int:
    """What a stacked model needs once, whatever its members: an evaluation pass (EVAL_ROWS member × example
    rows, counted as if saved for backward: an upper bound on a no-grad pass) and the progress probe's
    float64 tables, for one member at a time."""
    from engine.task.dlog import group_axis
    from engine.train.weights import EVAL_ROWS

    out = _saved_bytes(cfg, EVAL_ROWS)
    if cfg.probe.progress_every > 0:
        n = group_axis(cfg.data).n
        out += PROGRESS_TABLES * 8 * n * n * cfg.data.p  # C = p output classes
    return out


def members_that_fit(
    member: int,
    free: int,
    overhead: int = 0,
    sharing: int = 1,
    fraction: float = MEMORY_FRACTION,
    cap: int = MAX_MEMBERS,
) -> int:
    """Members of `member` bytes in one batch: `fraction` of `free` bytes shared by `sharing` batches at once,
    less the batch's `overhead`; at least 1 (a member alone trains whatever the estimate says), at most `cap`."""
    budget = fraction * free / max(sharing, 1) - overhead
    return max(1, min(cap, int(budget // max(member, 1))))


def free_bytes(device: str) -> int:
    """The card's free memory now (`torch.cuda.mem_get_info`)."""
    import torch

    dev = torch.device("cuda" if device == "auto" else device)
    return int(torch.cuda.mem_get_info(dev)[0])


def members_per_batch(cfg: RunConfig, free: int, sharing: int = 1) -> int:
    """Members of this config's shape per stacked model on a card with `free` bytes free."""
    return members_that_fit(member_bytes(cfg).total, free, batch_bytes(cfg), sharing)
