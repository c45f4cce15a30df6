"""Checkpoints: checkpoint.pt saved and loaded, and the kept ones under checkpoints/ for `grok fork` (docs/FORK.md).

`save_checkpoint` writes a run's state atomically and durably; `load_checkpoint` and `load_state` read one
back without running code from the file (weights_only). A kept checkpoint is the run's state at a chosen step.
`train.keep_every = N` keeps one every N steps, and one at each phase the run logs (M: memorized,
G: generalized, C: circuit formed) at the first checkpoint step at or after it. A kept checkpoint is
checkpoint.pt as written at that step, hard-linked (copied where links fail) to
checkpoints/step-<step>.pt, so keeping costs no second serialization. `train.keep_budget_mb` caps
their total size: past it the oldest go, the newest always stays. checkpoints/index.json names each
kept step and why it was kept.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.config import ConfigError, RunConfig
from engine.events import EvalLogged, Event, StepsTaken
from engine.rundir.atomic import replace_atomic, write_json_atomic
from engine.rundir.files import CHECKPOINT
from engine.rundir.safetext import clean_text
from engine.rundir.writer import RunWriteError

KEPT_DIR = "checkpoints"
INDEX = "index.json"
PHASE_MARKS = (("memorized_step", "M"), ("circuit_step", "C"), ("generalized_step", "G"))


@dataclass(frozen=True)
class Kept:
    """One kept checkpoint: its step, why it was kept (every, M, C, G) and its size in bytes."""

    step: int
    why: tuple[str, ...]
    path: Path
    bytes: int


def kept_path(run_dir: Path, step: int) -> Path:
    return Path(run_dir) / KEPT_DIR / f"step-{step:09d}.pt"


def list_kept(run_dir: str | Path) -> list[Kept]:
    """The run's kept checkpoints, oldest first ([] for a run that keeps none)."""
    d = Path(run_dir) / KEPT_DIR
    if not d.is_dir():
        return []
    why = _read_index(d)
    out = []
    for f in sorted(d.glob("step-*.pt")):
        try:
            step = int(f.stem.removeprefix("step-"))
            size = f.stat().st_size
        except (ValueError, OSError):
            continue
        out.append(Kept(step, tuple(why.get(str(step), ())), f, size))
    return sorted(out, key=lambda k: k.step)


def _read_index(d: Path) -> dict[str, list[str]]:
    try:
        doc = json.loads((d / INDEX).read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): [str(x) for x in v] for k, v in doc.items() if isinstance(v, list)} if isinstance(doc, dict) else {}


def checkpoint_at(run_dir: str | Path, step: int | None) -> tuple[Path, int]:
    """The checkpoint file holding `step` (None: the latest one) and its step; ConfigError naming the
    steps there are when none holds it."""
    d = Path(run_dir)
    kept = {k.step: k.path for k in list_kept(d)}
    latest = d / CHECKPOINT
    latest_step: int | None = None
    if latest.is_file():
        try:
            latest_step = int(load_state(latest)["step"])
        except ConfigError:  # an unreadable checkpoint: the kept ones are named below
            latest_step = None
    if step is None:
        if latest_step is not None:
            return latest, latest_step
        if kept:
            s = max(kept)
            return kept[s], s
        raise ConfigError(f"{d}: no checkpoint to fork from")
    if step in kept:
        return kept[step], step
    if latest_step == step:
        return latest, step
    have = sorted({*kept, *([latest_step] if latest_step is not None else [])})
    shown = ", ".join(map(str, have[-12:])) or "none"
    raise ConfigError(f"{d}: no checkpoint at step {step} (kept: {shown}); keep more with --set train.keep_every=N")


def load_state(path: Path, detailed: bool = False) -> dict[str, Any]:
    """A checkpoint file's state (checkpoint.pt or a kept one), loaded without running code from it
    (weights_only); ConfigError, one line naming the file (and, `detailed`, the loader's first line
    rather than its error's type), for anything that is not a checkpoint."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (PermissionError, IsADirectoryError, FileNotFoundError) as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 - unpickling refused, a bad zip, a truncated file (EINVAL), ...
        text = str(e).strip()
        reason = clean_text(text.splitlines()[0])[:200] if detailed and text else type(e).__name__
        raise ConfigError(f"{path}: not a grok-tui checkpoint ({reason})") from None
    if not isinstance(state, dict) or not {"step", "model", "opt", "rng"} <= state.keys():
        raise ConfigError(f"{path}: not a grok-tui checkpoint (missing its step, model, optimizer or RNG state)")
    return state


def load_checkpoint(run_dir: Path) -> dict[str, Any]:
    """The checkpoint's state, loaded without running any code from the file (weights_only).

    A checkpoint holds only dicts, lists, tensors, strings and numbers; anything else (a pickle that
    calls a function, a truncated or foreign file) is refused with a one-line ConfigError.
    """
    path = run_dir / CHECKPOINT
    if not path.exists():
        raise ConfigError(f"{run_dir}: no {CHECKPOINT} to resume from")
    return load_state(path, detailed=True)


def save_checkpoint(run_dir: Path, state: dict[str, Any], cfg: RunConfig) -> None:
    """Write a Trainer state as run_dir/checkpoint.pt atomically and durably: temp file, fsync, rename,
    fsync the directory. A batched sweep writes its members' checkpoints with it too."""
    import torch

    full = {**state, "config": cfg.to_dict()}

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            torch.save(full, fh)

    try:
        replace_atomic(run_dir / CHECKPOINT, write)
    except OSError as e:
        raise RunWriteError(run_dir / CHECKPOINT, e) from None
    except RuntimeError as e:  # torch's zip writer reports a failed write as RuntimeError
        cause = e.__cause__ or e.__context__
        if isinstance(cause, OSError):
            raise RunWriteError(run_dir / CHECKPOINT, cause) from None
        raise


class Keeper:
    """Decides, from a run's events, when to keep a checkpoint, and keeps it within the budget."""

    def __init__(self, run_dir: Path, cfg: RunConfig) -> None:
        self.dir = Path(run_dir)
        self.every = cfg.train.keep_every
        self.budget = int(cfg.train.keep_budget_mb * 1e6)
        self.pending: list[str] = []  # phases logged since the last kept step
        self._seen: set[str] = set()
        self._last = -1
        self._floor = -1
        self.on = self.every > 0

    def observe(self, ev: Event) -> list[str]:
        """Why to keep a checkpoint at `ev` (a StepsTaken), or []; phase marks wait for one."""
        if not self.on:
            return []
        if isinstance(ev, EvalLogged):
            for key, mark in PHASE_MARKS:
                at = getattr(ev, key, None)
                if at is not None and mark not in self._seen:
                    self._seen.add(mark)
                    if at > self._floor:  # a phase reached before a resume was kept (or not) then
                        self.pending.append(mark)
            return []
        if isinstance(ev, StepsTaken) and ev.step > self._last:
            return (["every"] if ev.step % self.every == 0 else []) + self.pending
        return []

    def resumed(self, step: int) -> None:
        """A resumed run: phases already past are not kept again, and nothing at or before `step` is."""
        self._last = self._floor = step
        for k in list_kept(self.dir):
            self._seen.update(m for m in k.why if m != "every")

    def keep(self, checkpoint: Path, step: int, why: list[str]) -> None:
        """Link (or copy) `checkpoint` as the kept one of `step`, note why, then trim to the budget; a failed
        write (a full disk) is the run's RunWriteError, one line naming the file."""
        d = self.dir / KEPT_DIR
        dst = kept_path(self.dir, step)
        try:
            d.mkdir(exist_ok=True)
            dst.unlink(missing_ok=True)
            try:
                os.link(checkpoint, dst)
            except OSError:  # a file system without hard links
                shutil.copyfile(checkpoint, dst)
            index: dict[str, Any] = _read_index(d)
            index[str(step)] = why
            self._trim(index)
            write_json_atomic(d / INDEX, dict(sorted(index.items(), key=lambda kv: int(kv[0]))))
        except OSError as e:
            raise RunWriteError(dst, e) from None
        self.pending = []
        self._last = step

    def _trim(self, index: dict[str, Any]) -> None:
        """Delete the oldest kept checkpoints while their total passes the budget; never the newest."""
        if self.budget <= 0:
            return
        kept = list_kept(self.dir)
        total = sum(k.bytes for k in kept)
        for k in kept[:-1]:
            if total <= self.budget:
                break
            k.path.unlink(missing_ok=True)
            index.pop(str(k.step), None)
            total -= k.bytes
