"""A run: a Trainer wired to its run directory. Every face (CLI, TUI, sweeps) iterates a Run."""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.config import ConfigError, RunConfig, from_dict
from engine.events import Event, RunFinished, RunStarted, StepsTaken
from engine.rundir import (
    CHECKPOINT,
    CONFIG,
    RunLock,
    RunLog,
    RunWriteError,
    clean_text,
    csv_header,
    new_run_dir,
    read_config,
    read_config_doc,
    read_summary,
    replace_atomic,
    truncate_csv,
    write_json_atomic,
)

# Keys a resume may change: they neither add columns nor change a tensor's shape or the trajectory
# up to the checkpoint. Every other difference between config.json and the checkpoint's config is
# refused, so no row is ever written under a header it does not match (issue 13, D3).
RESUMABLE_KEYS = frozenset(
    {
        "train.max_steps",
        "train.device",
        "train.checkpoint_every",
        "train.threads",
        "train.target_val_acc",
        "train.patience",
        "preset",
        "description",
    }
)


def flat(doc: dict[str, Any]) -> dict[str, Any]:
    """{"data": {"p": 97}, "preset": ...} -> {"data.p": 97, "preset": ...}; lists for tuples."""
    out: dict[str, Any] = {}
    for k, v in doc.items():
        if k.startswith("_"):
            continue
        if isinstance(v, dict):
            out.update({f"{k}.{kk}": list(vv) if isinstance(vv, tuple) else vv for kk, vv in v.items()})
        else:
            out[k] = v
    return out


def load_checkpoint(run_dir: Path) -> dict[str, Any]:
    """The checkpoint's state, loaded without running any code from the file (weights_only).

    A checkpoint holds only dicts, lists, tensors, strings and numbers; anything else (a pickle that
    calls a function, a truncated or foreign file) is refused with a one-line ConfigError.
    """
    import torch

    path = run_dir / CHECKPOINT
    if not path.exists():
        raise ConfigError(f"{run_dir}: no {CHECKPOINT} to resume from")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (PermissionError, IsADirectoryError) as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    except Exception as e:  # noqa: BLE001 - unpickling refused, a bad zip, a truncated file (EINVAL), ...
        reason = clean_text(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
        raise ConfigError(f"{path}: not a grok-tui checkpoint ({reason[:200]})") from None
    if not isinstance(state, dict) or not {"step", "model", "opt", "rng"} <= state.keys():
        raise ConfigError(f"{path}: not a grok-tui checkpoint (missing its step, model, optimizer or RNG state)")
    return state


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


def config_changes(saved: dict[str, Any], current: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Dotted keys whose value differs between the checkpoint's config and config.json."""
    a, b = flat(saved), flat(current)
    return {k: (a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)}


class Run:
    """Owns a Trainer, a RunLog and the run directory's lock; `events()` trains, logs and checkpoints."""

    def __init__(
        self, cfg: RunConfig, out: str | Path = "runs", *, run_dir: Path | None = None, _resume: Path | None = None
    ) -> None:
        """A new run in a new directory under `out`, or in `run_dir` (an existing, empty directory:
        a sweep member's planned one); `Run.resume` continues one from its checkpoint."""
        self.cfg = cfg
        self.status = "running"
        self.summary: dict[str, Any] = {}
        self.fault = ""  # a one-line machine fault (a full disk) that ended the run, for the faces to print
        self._lock: RunLock | None = None
        if _resume is not None:
            self.dir = _resume
            self._lock = RunLock(_resume).acquire()  # before anything is read: no second writer
            try:
                self._open_resumed(_resume)
            except BaseException:
                self.close()
                raise
        else:
            self.trainer = self._trainer(None)
            self.dir = run_dir if run_dir is not None else new_run_dir(Path(out), cfg.preset, cfg.train.seed)
            self._lock = RunLock(self.dir).acquire()
        self.log = RunLog(self.dir, cfg, resume=_resume is not None)

    def _trainer(self, state: dict[str, Any] | None) -> Any:
        from engine.footprint import check_run
        from engine.trainer import Trainer

        check_run(self.cfg)  # refuse what cannot fit before a byte is allocated (issue 13, F2)
        try:
            return Trainer(self.cfg, state=state)
        except ConfigError:
            raise
        except ValueError as e:  # e.g. an unavailable device
            raise ConfigError(str(e)) from None

    def _open_resumed(self, d: Path) -> None:
        state = load_checkpoint(d)
        doc = read_config_doc(d)
        saved = state.get("config")
        changed: dict[str, tuple[Any, Any]] = {}
        if isinstance(saved, dict):
            try:  # through from_dict, so that a key added since the checkpoint compares at its default
                saved = from_dict(saved, str(d / CHECKPOINT)).to_dict()
            except ConfigError:
                pass  # a key since removed: compared as written, and named below
            changed = config_changes(saved, self.cfg.to_dict())
            refused = sorted(k for k in changed if k not in RESUMABLE_KEYS)
            if refused:
                raise ConfigError(
                    f"{d / CONFIG}: changed since the checkpoint: {', '.join(refused)} "
                    "(a resume may change only " + ", ".join(sorted(RESUMABLE_KEYS)) + ")"
                )
        try:
            self.trainer = self._trainer(state)
        except ConfigError:
            raise
        except (KeyError, RuntimeError, ValueError, TypeError, IndexError, AttributeError) as e:
            reason = clean_text(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
            raise ConfigError(f"{d / CHECKPOINT}: does not match {d / CONFIG} ({reason[:200]})") from None
        header = csv_header(d / "metrics.csv")
        if header and tuple(header) != tuple(self.trainer.columns):
            extra = sorted(set(self.trainer.columns) ^ set(header))
            raise ConfigError(
                f"{d / 'metrics.csv'}: its columns differ from this run's ({', '.join(extra) or 'order'}); "
                "start a new run"
            )
        t = self.cfg.train
        step = self.trainer.step
        for name in ("metrics.csv", "tokens.csv", "fourier.csv", "keyfreq.csv", "ring.csv"):
            # A row at the checkpoint's own step that is off the evaluation cadence was written where
            # a run stopped; an uninterrupted run has none, so it goes (bit-for-bit resume, F13).
            truncate_csv(d / name, step, keep_last=lambda s: s % t.eval_every == 0 or s == t.max_steps)
        if not isinstance(saved, dict):  # a checkpoint from before configs were saved in it
            changed = config_changes(doc, self.cfg.to_dict())
        if changed:
            meta: dict[str, Any] = doc.get("_meta") or {}
            meta = meta if isinstance(meta, dict) else {}
            old = meta.get("resumed")
            history: list[Any] = [
                *(old if isinstance(old, list) else []),
                {
                    "step": step,
                    "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "changed": {k: {"from": a, "to": b} for k, (a, b) in changed.items()},
                },
            ]
            write_json_atomic(d / CONFIG, {**self.cfg.to_dict(), "_meta": {**meta, "resumed": history}})

    @classmethod
    def resume(cls, run_dir: str | Path, max_steps: int | None = None, device: str | None = None) -> Run:
        """Continue a run from its checkpoint, bit-for-bit on the CPU; `max_steps` may extend it."""
        path = Path(run_dir)
        cfg = read_config(path)
        train = cfg.train
        try:
            if max_steps is not None:
                train = dataclasses.replace(train, max_steps=max_steps)
            if device is not None:
                train = dataclasses.replace(train, device=device)
        except ConfigError as e:
            raise ConfigError(str(e)) from None
        cfg = dataclasses.replace(cfg, train=train)
        if read_summary(path).get("status") == "finished" and max_steps is None:
            raise ConfigError(f"{path}: run already finished; pass --steps N to extend it")
        return cls(cfg, _resume=path)

    # control
    def stop(self, status: str = "interrupted") -> None:
        self.trainer.stop(status)

    def pause(self) -> None:
        self.trainer.pause()

    def unpause(self) -> None:
        """Let a paused run go on (`Run.resume` is the other thing: continue a run from its checkpoint)."""
        self.trainer.unpause()

    def close(self) -> None:
        """Release the run directory's lock (done when `events()` ends; idempotent)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def checkpoint(self) -> None:
        """Write checkpoint.pt atomically and durably (`save_checkpoint`)."""
        save_checkpoint(self.dir, self.trainer.state_dict(), self.cfg)

    def events(self) -> Iterator[Event]:
        every = self.cfg.train.checkpoint_every
        last_ckpt = self.trainer.step
        stream = self.trainer.events()
        try:
            for ev in stream:
                if isinstance(ev, RunStarted):
                    ev = dataclasses.replace(ev, run_dir=str(self.dir))
                if isinstance(ev, RunFinished):
                    self.checkpoint()
                    self.status, self.summary = ev.status, ev.summary
                self.log.handle(ev)
                if isinstance(ev, StepsTaken) and ev.step // every > last_ckpt // every:
                    self.checkpoint()
                    last_ckpt = ev.step
                yield ev
        except GeneratorExit:
            # The consumer stopped iterating (e.g. the TUI quit): close the log as interrupted.
            self._abort("interrupted", "")
            raise
        except RunWriteError as e:  # a full disk, a read-only remount: one line, no traceback
            self.fault = str(e)
            self._abort("failed", self.fault, checkpoint=False)
            yield RunFinished("failed", self.summary, self.fault)
        except Exception as e:  # noqa: BLE001 - an engine fault: record it, keep what was written
            msg = f"{type(e).__name__}: {e}"
            self._abort("failed", msg, traceback.format_exc())
            yield RunFinished("failed", self.summary, msg)
        finally:
            stream.close()  # the trainer's loop thread ends here, whatever ended the run
            self.log.close()
            self.close()

    def _abort(self, status: str, msg: str, tb: str = "", checkpoint: bool = True) -> None:
        """Best effort on the way out: each write may itself fail (a full disk) and is then skipped."""
        self.status = status
        self.summary = self.trainer.summary(status)
        if msg:
            self.summary["error"] = msg
        if checkpoint:
            try:
                self.checkpoint()
            except Exception:  # noqa: BLE001 - the run log matters more than the checkpoint
                pass
        try:
            if tb:
                (self.dir / "error.txt").write_text(tb)
        except OSError:
            pass
        self.log.summary = self.summary
        try:
            self.log.write_summary()
        except (OSError, RunWriteError):
            pass
