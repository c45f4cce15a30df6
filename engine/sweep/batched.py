"""Sweep members that share shapes, trained on a GPU as one batched model (engine/batched.py).

`plan` groups a sweep's members into batches; `run_batch` trains one batch and writes each member's
normal run directory (config.json, metrics.csv, tokens.csv, summary.json; no checkpoint, so an
interrupted batched member starts over on --resume). On the CPU one model already fills the cores,
so members run one by one there.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

MAX_MEMBERS = 32  # members per batched model


def _wants_batches(config: dict[str, Any]) -> bool:
    dev = str(config.get("train", {}).get("device", "auto"))
    if dev.startswith("cuda"):
        return True
    if dev != "auto" or not Path("/proc/driver/nvidia").exists():
        return False  # no NVIDIA driver: the sweep's parent process stays torch-free
    import torch

    return torch.cuda.is_available()


def plan(specs: list[dict[str, Any]], max_members: int = MAX_MEMBERS) -> list[list[dict[str, Any]]]:
    """Batches of members that can train as one model on a GPU; every other member alone."""
    if not any(not s.get("resume_dir") and _wants_batches(s["config"]) for s in specs):
        return [[s] for s in specs]
    from engine.batched import why_not_batched
    from engine.config import from_dict

    out: list[list[dict[str, Any]]] = []
    open_batches: list[list[dict[str, Any]]] = []
    for s in specs:
        if s.get("resume_dir") or not _wants_batches(s["config"]):
            out.append([s])
            continue
        cfg = from_dict(s["config"])
        for b in open_batches:
            if len(b) < max_members and why_not_batched([from_dict(b[0]["config"]), cfg]) is None:
                b.append(s)
                break
        else:
            if why_not_batched([cfg]) is None:
                open_batches.append([s])
            else:
                out.append([s])
    return open_batches + out


def batchable(specs: list[dict[str, Any]]) -> bool:
    """True when `plan` would put all these members in one batch."""
    return len(plan(specs, max(len(specs), 1))) == 1


def run_batch(specs: list[dict[str, Any]], group_dir: str, notify: Any, stop: Any) -> list[dict[str, Any]]:
    """Train the batch as one model; one results row per member, as `sweep_pool.run_member` returns."""
    from engine.batched import ManyTrainer
    from engine.config import from_dict
    from engine.events import EvalLogged, RunFinished, RunStarted, StepsTaken
    from engine.rundir import RunLog, new_run_dir

    cfgs = [from_dict(s["config"]) for s in specs]
    ids = [s["id"] for s in specs]
    trainer = ManyTrainer(cfgs)
    dirs = [new_run_dir(Path(group_dir), c.preset, c.train.seed) for c in cfgs]
    logs = [RunLog(d, c) for d, c in zip(dirs, cfgs, strict=True)]
    last: list[dict[str, Any]] = [{} for _ in cfgs]
    summaries: list[dict[str, Any]] = [{} for _ in cfgs]
    mark = 0.0
    try:
        for i, ev in trainer.events():
            if isinstance(ev, RunStarted):
                ev = dataclasses.replace(ev, run_dir=str(dirs[i]))
                if notify:
                    notify(("started", ids[i], dirs[i].name, ev.max_steps))
            elif isinstance(ev, EvalLogged):
                last[i] = ev.row
            elif isinstance(ev, StepsTaken) and i == 0 and time.perf_counter() - mark > 0.5:
                mark = time.perf_counter()
                for mid in ids:
                    if notify:
                        notify(("step", mid, ev.step))
                if stop():
                    trainer.stop("interrupted")
            elif isinstance(ev, RunFinished):
                summaries[i] = ev.summary
            logs[i].handle(ev)
    finally:
        for log in logs:
            log.close()
    base = {
        "step",
        "epoch",
        "wall_s",
        "train_loss",
        "train_acc",
        "val_loss",
        "val_acc",
        "lr",
        "lr_embed",
        "lr_ratio",
        "f_E",
    }
    rows = []
    for i, s in enumerate(summaries):
        row: dict[str, Any] = {
            k: s.get(k)
            for k in (
                "status",
                "steps",
                "memorized_step",
                "generalized_step",
                "grokking_delay",
                "final_train_acc",
                "final_val_acc",
                "best_val_acc",
                "wall_s",
            )
        }
        row.update(member=ids[i], max_steps=cfgs[i].train.max_steps, run_dir=dirs[i].name)
        row.update({f"final_{k}": v for k, v in last[i].items() if k not in base})
        rows.append(row)
    return rows
