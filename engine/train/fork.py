"""`grok fork`: a new run directory that goes on from a run's checkpoint with changes (docs/FORK.md).

A fork is a run directory like any other: config.json (the changed config, its lineage in
`_meta.fork`), the parent's rows up to the fork step, summary.json (status interrupted, with `parent`,
`fork_step`, `ancestors`, `interventions`) and checkpoint.pt (the parent's state at the fork step, with
the interventions applied). Running it is resuming it (engine/train/run.py `Run.from_checkpoint`), so a
killed fork resumes like any run, and a fork that changes nothing goes on bit for bit as its parent
did: the same weights, optimizer moments, sampler stream, RNG and phase tracker.

What a change does to the state it meets (the optimizer's state is logged as `optimizer_state`):
- optimizer settings (lr, c, weight decay, betas, ...) apply from the fork step on; Adam's moments are
  kept where the parameter groups and the state's layout match (adam and adamw share one), reset when
  the optimizer changes to or from sgd;
- the sampler, target_rate, gamma, batch size or the training set (train.add_pairs) start a fresh
  sampler on the new training set;
- new probes start at the fork, missing cells of the parent's rows stay empty.
Data, model shape, seed, dtype and the loss's arithmetic cannot change mid-run: one line, exit 2.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from engine.config import ConfigError, DataConfig, RunConfig
from engine.config.param_sets import ROW_KINDS, Intervention, parse_intervention, parse_tokens
from engine.config.resolve import resolve
from engine.events import Status
from engine.rundir import (
    CONFIG,
    METRICS,
    RunDirError,
    checkpoint_at,
    empty_run_dir,
    load_state,
    read_config,
    read_config_doc,
    read_summary,
    save_checkpoint,
    unique_dir,
    write_json_atomic,
    write_summary,
)
from engine.rundir.destination import RUN, check_root
from engine.rundir.lineage import copy_logs, lineage, read_interventions, recolumn, write_interventions
from engine.summary import RunSummary
from engine.task.dlog import SIGNS, group_axis
from engine.train.logged import check_columns, metrics_columns
from engine.train.run import config_changes

# Keys a fork may change; every other difference (data.*, model.*, train.seed, train.dtype) is refused.
FORKABLE_GROUPS = ("optim.", "probe.")
FORKABLE_TRAIN = frozenset(
    {
        "max_steps",
        "eval_every",
        "sampler",
        "gamma",
        "target_rate",
        "target_draws_as",
        "batch_size",
        "device",
        "target_val_acc",
        "patience",
        "stop_metric",
        "checkpoint_every",
        "threads",
        "cuda_graph",
        "keep_every",
        "keep_budget_mb",
        "frozen",
        "trainable",
        "add_pairs",
        "add_pairs_m",
        "loss",
    }
)
SAMPLER_KEYS = (
    "train.sampler",
    "train.gamma",
    "train.target_rate",
    "train.target_draws_as",
    "train.batch_size",
    "train.add_pairs",
    "train.add_pairs_m",
)
PRESET_KEYS = ("preset", "description")
ADAM_STATE = ("adam", "adamw")  # one state layout: step, exp_avg, exp_avg_sq


def forkable(key: str) -> bool:
    group, _, name = key.partition(".")
    return key.startswith(FORKABLE_GROUPS) or (group == "train" and name in FORKABLE_TRAIN) or key in PRESET_KEYS


def refuse_unforkable(changed: list[str]) -> None:
    bad = [k for k in changed if not forkable(k)]
    if bad:
        raise ConfigError(
            f"{bad[0]}: cannot change mid-run (a fork may change optim.*, probe.* and train.* but "
            "train.seed and train.dtype; data and model keys need a new run)"
        )


def fork_run(
    parent: str | Path,
    at: int | None = None,
    sets: dict[str, Any] | None = None,
    interventions: list[str] | None = None,
    out: str | Path | None = None,
    steps: int | None = None,
    into: Path | None = None,
) -> Path:
    """Write the fork of `parent` at step `at` (None: its latest checkpoint) and return its directory: a new
    one under `out` (default: beside the parent), or `into` (a sweep member's, made or emptied). Run it
    with `Run.from_checkpoint`. ConfigError, one line, for anything that cannot fork."""

    from engine.task.metrics import split_tokens

    src = Path(parent)
    pcfg = read_config(src)
    pdoc = read_config_doc(src)
    psum = read_summary(src)
    ivs = [parse_intervention(s) for s in interventions or []]
    ckpt, step = checkpoint_at(src, at)

    cfg = resolve(pcfg, sets, steps=steps, where="--set")  # engine/config/resolve.py, as every command
    from engine.train.interventions import set_changes

    for iv in ivs:
        if iv.kind not in ROW_KINDS:
            cfg = set_changes(cfg, iv)
    changed = config_changes(pcfg.to_dict(), cfg.to_dict())
    refuse_unforkable(list(changed))
    check_columns(cfg)
    if cfg.train.max_steps <= step:
        raise ConfigError(f"train.max_steps: {cfg.train.max_steps} is not past the fork step {step}; pass --steps N")
    sets_of = split_tokens(pcfg)  # token roles in the parent's split (a fork's add_pairs does not move them)
    if cfg.train.frozen != pcfg.train.frozen or cfg.train.trainable != pcfg.train.trainable:
        _check_sets(cfg, sets_of)
    state = load_state(ckpt)
    events: list[dict[str, Any]] = []
    for iv in ivs:
        if iv.kind in ROW_KINDS:
            detail = _rows(iv, state, cfg, sets_of, src)
        else:
            detail = f"train.frozen = {cfg.train.frozen!r}, train.trainable = {cfg.train.trainable!r}"
        events.append({"step": step, "kind": iv.kind, "target": iv.what, "detail": detail})
    set_by_ivs = {"train.frozen", "train.trainable"} if any(iv.kind not in ROW_KINDS for iv in ivs) else set()
    for k, (a, b) in changed.items():
        if k not in set_by_ivs and k not in ("train.max_steps",):
            events.append({"step": step, "kind": "set", "target": k, "detail": f"{a} -> {b}"})
    opt_note = _optimizer_state(state, pcfg, cfg, changed)
    for k in changed:  # a probe whose cadence changes starts it at the fork: due at the fork's next evaluation
        name = k.removeprefix("probe.").removesuffix("_every")
        if k.startswith("probe.") and k.endswith("_every") and name in (state.get("probes") or {}):
            state["probes"][name]["next_due"] = step
    if any(k in changed for k in SAMPLER_KEYS):
        state["sampler"] = None
    if "optim.lr_ratio" in changed and not cfg.optim.adaptive:  # c in force from the fork step on
        state["lr_ratio"] = state["c_raw"] = cfg.optim.lr_ratio
    return _write(src, step, cfg, pcfg, pdoc, psum, state, events, opt_note, changed, out, into)


def axis_tokens(data: DataConfig) -> list[int] | None:
    """The operand tokens in group-axis order (engine/task/dlog.py; mul and div leave 0 out), None for poly."""
    return [int(t) for t in group_axis(data).order] if data.op in SIGNS else None


def _rows(iv: Intervention, state: dict[str, Any], cfg: RunConfig, sets: Any, src: Path) -> str:
    """Apply a row intervention to the checkpoint's E; the detail the log records."""
    from engine.task.metrics import resolve_tokens
    from engine.train.interventions import apply_rows, copied_embedding, initial_embedding

    names = [n for n in state["model"] if n in _e_names(cfg)]
    if not names:
        raise ConfigError(f"--intervene {iv}: this model ({cfg.model.kind}) has no embedding E")
    e = names[0]
    tokens = resolve_tokens(parse_tokens(iv.what), sets, cfg.data.p, f"--intervene {iv}")
    if not tokens:  # e.g. targets on a run whose split has none: an intervention that would do nothing
        raise ConfigError(f"--intervene {iv}: {iv.what} names no token of this run ({_roles(sets)})")
    source = None
    if iv.kind == "reset":
        source = initial_embedding(cfg, e)
    elif iv.kind == "copy":
        source, where = copied_embedding(cfg, iv.arg, e)
        iv = dataclasses.replace(iv, arg=where)
    elif iv.kind == "turn" and iv.arg == "memorized":
        source = _memorized_embedding(src, e, iv)
    detail = apply_rows(iv, state["model"], e, tokens, cfg.data.p, source, axis_tokens(cfg.data))
    return f"tokens {' '.join(map(str, tokens)) or '-'}: {detail}"


def _memorized_embedding(src: Path, e: str, iv: Intervention) -> Any:
    """E at the parent's kept checkpoint of its memorization step (train.keep_every keeps it, marked M)."""
    from engine.rundir import list_kept

    marked = [k for k in list_kept(src) if "M" in k.why]
    if not marked:
        raise ConfigError(f"--intervene {iv}: {src.name} has no kept checkpoint at memorization (train.keep_every)")
    return load_state(checkpoint_at(src, marked[0].step)[0])["model"][e]


def _roles(sets: Any) -> str:
    """How many tokens each role holds in the run's split: `targets 0, rare 12, absent 0`."""
    return ", ".join(
        f"{name} {len(getattr(sets, attr))}"
        for name, attr in (("targets", "target"), ("rare", "rare"), ("absent", "absent"))
    )


def _built(cfg: RunConfig) -> Any:
    """A model of `cfg`, built without moving torch's RNG (the checkpoint's RNG state is the run's)."""
    import torch

    from engine.models import build_model

    rng = torch.get_rng_state()
    try:
        return build_model(cfg)
    finally:
        torch.set_rng_state(rng)


def _check_sets(cfg: RunConfig, sets: Any) -> None:
    """ConfigError, one line, where train.frozen or train.trainable names what this model does not have."""
    from engine.train.interventions import frozen_masks

    frozen_masks(_built(cfg), cfg, sets)


def _e_names(cfg: RunConfig) -> list[str]:
    from engine.models import embedding_names

    return embedding_names(_built(cfg))


def _optimizer_state(state: dict[str, Any], pcfg: RunConfig, cfg: RunConfig, changed: dict[str, Any]) -> str:
    """Carry the optimizer's state across the fork: untouched where no optim key changed, kept with the new
    settings where the groups and layout match, else reset. Returns what was done, for the log."""
    if not any(k.startswith("optim.") for k in changed):
        return "kept (no optimizer change)"
    from engine.train.optim import build_optimizer

    fresh = build_optimizer(_built(cfg), cfg).state_dict()
    old = state["opt"]
    same_groups = [len(g["params"]) for g in old["param_groups"]] == [len(g["params"]) for g in fresh["param_groups"]]
    a, b = pcfg.optim.name, cfg.optim.name
    same_layout = a == b or {a, b} <= set(ADAM_STATE)
    if same_groups and same_layout:
        state["opt"] = {"state": old["state"], "param_groups": fresh["param_groups"]}
        return f"kept ({a} -> {b}, new settings)" if a != b else "kept (new settings)"
    state["opt"] = fresh
    why = "parameter groups differ" if not same_groups else f"{a} -> {b}"
    return f"reset ({why})"


def _where(parent: Path, root: Path) -> str:
    """The parent as the fork records it: a name when they share a directory, else a path relative to it."""
    try:
        return os.path.relpath(parent.resolve(), root.resolve())
    except ValueError:  # another drive
        return str(parent.resolve())


def _write(
    src: Path,
    step: int,
    cfg: RunConfig,
    pcfg: RunConfig,
    pdoc: dict[str, Any],
    psum: Any,  # the parent's RunSummary
    state: dict[str, Any],
    events: list[dict[str, Any]],
    opt_note: str,
    changed: dict[str, Any],
    out: str | Path | None,
    into: Path | None = None,
) -> Path:
    root = Path(out) if out is not None else src.resolve().parent
    if into is None:  # beside its parent, or where --out says, but never inside another run or a group
        check_root(root, RUN, beside=src.resolve().parent)
    try:
        if into is not None:
            empty_run_dir(into)
            d = into
        else:
            d = unique_dir(root, f"{src.resolve().name}-fork{step}")
    except OSError as e:
        raise RunDirError(f"cannot write run directory under {root}: {e.strerror or e}") from None
    t = pcfg.train
    # the parent's rows up to the fork step, as a resume would keep them
    copy_logs(src, d, step, keep_last=lambda s: s % t.eval_every == 0 or s == t.max_steps)
    if any(k.startswith("probe.") for k in changed) and (d / METRICS).is_file():
        recolumn(d / METRICS, metrics_columns(cfg))
    parent = _where(src, d.parent)
    old = lineage(psum)
    ancestors = [{"run": parent, "fork_step": step}]
    for a in old.get("ancestors", []) if isinstance(old.get("ancestors"), list) else []:
        if isinstance(a, dict) and "run" in a:  # re-rooted at the fork's directory
            ancestors.append({**a, "run": _where((src.resolve().parent / str(a["run"])), d.parent)})
    inherited = [e for e in read_interventions(src) if int(e["step"]) <= step]
    all_events = inherited + events
    fork = {"parent": parent, "fork_step": step, "ancestors": ancestors}
    write_interventions(d, all_events)
    meta = {k: v for k, v in (pdoc.get("_meta") or {}).items() if k != "resumed"}
    if "train.add_pairs" in changed or "train.add_pairs_m" in changed:
        meta.update(_training_set(cfg))  # the training set the fork trains on, as RunStarted would log it
    write_json_atomic(d / CONFIG, {**cfg.to_dict(), "_meta": {**meta, "fork": {**fork, "optimizer_state": opt_note}}})
    summary = {
        "status": Status.PREPARED,  # until it trains: then it is a run like any other
        "steps": step,
        "preset": cfg.preset,
        "seed": cfg.train.seed,
        **fork,
        "interventions": all_events,
        "optimizer_state": opt_note,
    }
    write_summary(d, RunSummary.written(summary))
    # the fork's own window starts here: its summary's batch facts count its steps only (engine/train/evaluation.py)
    state = {**state, "step": step, "window_step": step, "window_updates": state["updates"].clone()}
    save_checkpoint(d, state, cfg)
    return d


def _training_set(cfg: RunConfig) -> dict[str, Any]:
    """config.json's n_train and token_freq for a fork's training set (train.add_pairs, engine/task/add_pairs.py)."""
    import numpy as np

    from engine.task import data as D
    from engine.task.add_pairs import added_pairs

    train = D.make_split(cfg.data, cfg.train.seed).train
    if cfg.train.add_pairs:
        train = np.concatenate([train, added_pairs(cfg)])
    seqs = D.tokens(cfg.data, D.operand_pairs(cfg.data))[train]
    return {"n_train": len(train), "token_freq": [int(c) for c in D.token_counts(cfg.data, seqs)]}
