"""Optimizers with the embedding in its own parameter group: where Adam-LR lives (§4.3, Prop. 4.1)."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import torch
from torch import nn

from engine.config import RunConfig
from engine.models import embedding_names
from engine.train.eager import defer_dynamo_disable, eager_step


def build_optimizer(model: nn.Module, cfg: RunConfig) -> torch.optim.Optimizer:
    """Group 0 is the embedding E with lr_E = c·lr; group 1 is everything else with lr."""
    o = cfg.optim
    e_names = set(embedding_names(model))
    emb = [p for n, p in model.named_parameters() if n in e_names and p.requires_grad]
    rest = [p for n, p in model.named_parameters() if n not in e_names and p.requires_grad]
    groups = [
        {"params": emb, "lr": o.lr * o.lr_ratio, "name": "embedding"},
        {"params": rest, "lr": o.lr, "name": "rest"},
    ]
    # fused kernels where torch has them (CPU and CUDA): one kernel for every parameter's moments and
    # update instead of one per tensor op; foreach elsewhere. `python bench/ab.py` measures a change.
    devices = {p.device.type for p in emb + rest}
    impl = {"fused": True} if devices <= {"cpu", "cuda"} else {"foreach": True}
    defer_dynamo_disable()  # a run that never compiles never imports torch._dynamo (engine/train/eager.py)
    opt: torch.optim.Optimizer
    # decay sets and decay only when drawn: applied entry by entry (engine/train/decay.py)
    wd = 0.0 if o.decay_sets or o.lazy_decay else o.weight_decay
    if o.name == "adam":  # coupled L2: wd·θ is added to the gradient before the moments (the paper's setup)
        opt = torch.optim.Adam(groups, lr=o.lr, betas=o.betas, eps=o.eps, weight_decay=wd, **impl)
    elif o.name == "adamw":
        opt = torch.optim.AdamW(groups, lr=o.lr, betas=o.betas, eps=o.eps, weight_decay=wd, **impl)
    else:
        opt = torch.optim.SGD(groups, lr=o.lr, momentum=o.momentum, weight_decay=wd, **impl)
    opt.__dict__["step"] = eager_step(opt)
    return opt


def scheduled(cfg: RunConfig) -> bool:
    """True when the lr changes with the step (a warm-up or a cosine); otherwise it is never touched."""
    return cfg.optim.warmup_steps > 0 or cfg.optim.schedule != "constant"


def lr_at(cfg: RunConfig, step: int) -> float:
    """The lr of the step that follows `step` steps taken (0-based), before the embedding's factor c.

    Warm-up: lr·t/warmup_steps for t < warmup_steps, so the first step has lr 0, as torch's
    LambdaLR(lambda t: min(t / warmup_steps, 1)) gives it. Then constant, or cosine: half a period
    from lr down to 0 at train.max_steps.
    """
    o, w = cfg.optim, cfg.optim.warmup_steps
    if step < w:
        return o.lr * step / w
    if o.schedule == "cosine":
        span = max(cfg.train.max_steps - w, 1)
        return o.lr * 0.5 * (1.0 + math.cos(math.pi * min(step - w, span) / span))
    return o.lr


def apply_lr(opt: torch.optim.Optimizer, lr: float, ratio: float) -> None:
    """Set the lr in force: lr·c on the embedding group (Adam-LR), lr on the rest. A group whose lr is a
    tensor (`tensor_lrs`: a recorded step reads it) gets the value written into it, not replaced."""
    for g, value in zip(opt.param_groups, (lr * ratio, lr), strict=True):
        if isinstance(g["lr"], torch.Tensor):
            g["lr"].fill_(value)  # a kernel with the value as its argument: no host sync
        else:
            g["lr"] = value


def tensor_lrs(opt: torch.optim.Optimizer, device: torch.device) -> None:
    """Each group's lr as a 0-dim tensor on the parameters' device, which the fused Adam kernel reads at
    each launch: a recorded step (engine/train/gpu/cuda_graph.py) then follows a schedule or an adaptive c that
    `apply_lr` writes between replays, instead of the number the recording saw. The fused CUDA kernel
    reads a float32 lr (a float lr is rounded to float32 there too, for float32 weights); the CPU's reads
    a double, so the tensor is float64 there and the trajectory is the float lr's bit for bit."""
    dtype = torch.float32 if device.type == "cuda" else torch.float64
    for g in opt.param_groups:
        if not isinstance(g["lr"], torch.Tensor):
            g["lr"] = torch.tensor(float(g["lr"]), dtype=dtype, device=device)


def plain_lrs(state: dict[str, Any]) -> dict[str, Any]:
    """An optimizer state_dict with each group's lr a float, as a checkpoint holds it whatever the step."""
    groups = [{**g, "lr": float(g["lr"])} if isinstance(g["lr"], torch.Tensor) else g for g in state["param_groups"]]
    return {**state, "param_groups": groups}


def settings(cfg: RunConfig) -> str | None:
    """The optimizer settings a member keeps for the whole run, as one comparable key; None where they
    are its own (adaptive c is recomputed from each member's E, Prop. 4.1). Members with equal keys
    step as one optimizer over their rows of a stacked model (`shared_ranges`)."""
    if cfg.optim.adaptive:
        return None
    o = dataclasses.asdict(cfg.optim)
    key: dict[str, object] = {"optim": o, "max_steps": cfg.train.max_steps}  # max_steps: the cosine
    if cfg.optim.equal_rows:  # the rows equalized lie on the task's group axis (engine/train/row_norms.py)
        key["data"] = {"op": cfg.data.op, "p": cfg.data.p}
    return json.dumps(key, sort_keys=True)


def shared_ranges(cfgs: list[RunConfig]) -> list[tuple[int, int]]:
    """Members [a, b) in order, each a maximal run of neighbours with equal `settings` (else alone)."""
    keys = [settings(c) for c in cfgs]
    out: list[tuple[int, int]] = []
    for i, k in enumerate(keys):
        if out and k is not None and keys[out[-1][0]] == k:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def member_state(shared: torch.optim.Optimizer, row: int, own: torch.optim.Optimizer) -> dict[str, Any]:
    """Member `row`'s optimizer state in torch's single-run format, taken from the optimizer `shared`
    that steps the rows of its range together; `own` is built over the member's own parameters (in the
    same order) and gives the format. Each state tensor with the range's leading axis is sliced to the
    member's row, a 0-dim one (Adam's step) is copied; any other shape is a format this does not know."""
    for g_own, g_shared in zip(own.param_groups, shared.param_groups, strict=True):
        g_own.update({k: v for k, v in g_shared.items() if k != "params"})  # the lr in force (`plain_lrs`)
        for p_own, p_shared in zip(g_own["params"], g_shared["params"], strict=True):
            if p_shared not in shared.state:
                continue
            entry: dict[str, Any] = {}
            for k, v in shared.state[p_shared].items():
                if isinstance(v, torch.Tensor) and v.dim() > 0:
                    if v.shape[0] != p_shared.shape[0]:
                        raise ValueError(f"optimizer state {k!r} of shape {tuple(v.shape)}: not per member")
                    v = v[row]
                entry[k] = v.clone() if isinstance(v, torch.Tensor) else v
            own.state[p_own] = entry
    return plain_lrs(own.state_dict())


def load_member(shared: torch.optim.Optimizer, row: int, own: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    """Member `row`'s optimizer state, in torch's single-run format (a checkpoint's, `member_state`'s), into
    the optimizer `shared` that steps its range's rows together: `own`, built over the member's parameters,
    reads the format; each per-parameter tensor goes to the member's row, and a 0-dim one (Adam's step)
    must equal the range's, whose members step as one optimizer."""
    own.load_state_dict(state)
    for g_own, g_shared in zip(own.param_groups, shared.param_groups, strict=True):
        for p_own, p_shared in zip(g_own["params"], g_shared["params"], strict=True):
            entry = shared.state[p_shared]
            for k, v in own.state.get(p_own, {}).items():
                if isinstance(v, torch.Tensor) and v.dim() > 0:
                    if k not in entry:
                        entry[k] = torch.zeros((p_shared.shape[0], *v.shape), dtype=v.dtype, device=v.device)
                    entry[k][row].copy_(v)
                elif k in entry and not bool(torch.as_tensor(entry[k] == v).all()):
                    raise ValueError(f"optimizer state {k!r}: the members of one optimizer are at different steps")
                else:
                    entry[k] = v.clone() if isinstance(v, torch.Tensor) else v
