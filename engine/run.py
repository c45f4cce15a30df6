"""A run: a Trainer wired to its run directory. Every face (CLI, TUI, sweeps) iterates a Run."""

from __future__ import annotations

import dataclasses
import os
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.config import ConfigError, RunConfig
from engine.events import Event, RunFinished, RunStarted, StepsTaken
from engine.rundir import CHECKPOINT, RunLog, new_run_dir, read_config, read_summary, truncate_csv


class Run:
    """Owns a Trainer and a RunLog; `events()` trains, logs and checkpoints as it yields."""

    def __init__(self, cfg: RunConfig, out: str | Path = "runs", *, _resume: Path | None = None) -> None:
        import torch

        from engine.trainer import Trainer

        self.cfg = cfg
        state: dict[str, Any] | None = None
        if _resume is not None:
            self.dir = _resume
            ckpt = _resume / CHECKPOINT
            if not ckpt.exists():
                raise ConfigError(f"{_resume}: no {CHECKPOINT} to resume from")
            state = torch.load(ckpt, map_location="cpu", weights_only=True)
        try:
            self.trainer = Trainer(cfg, state=state)
        except ValueError as e:  # e.g. an unavailable device
            raise ConfigError(str(e)) from None
        if _resume is None:
            self.dir = new_run_dir(Path(out), cfg.preset, cfg.train.seed)
        else:
            for name in ("metrics.csv", "tokens.csv", "fourier.csv"):
                truncate_csv(self.dir / name, self.trainer.step)
        self.log = RunLog(self.dir, cfg, resume=_resume is not None)
        self.status = "running"
        self.summary: dict[str, Any] = {}

    @classmethod
    def resume(cls, run_dir: str | Path, max_steps: int | None = None, device: str | None = None) -> Run:
        """Continue a run from its checkpoint, bit-for-bit on the CPU; `max_steps` may extend it."""
        path = Path(run_dir)
        cfg = read_config(path)
        train = cfg.train
        if max_steps is not None:
            train = dataclasses.replace(train, max_steps=max_steps)
        if device is not None:
            train = dataclasses.replace(train, device=device)
        cfg = dataclasses.replace(cfg, train=train)
        if read_summary(path).get("status") == "finished" and max_steps is None:
            raise ConfigError(f"{path}: run already finished; pass --steps N to extend it")
        return cls(cfg, _resume=path)

    # control
    def stop(self, status: str = "interrupted") -> None:
        self.trainer.stop(status)

    def pause(self) -> None:
        self.trainer.pause()

    def resume_training(self) -> None:
        self.trainer.resume()

    def checkpoint(self) -> None:
        import torch

        tmp = self.dir / (CHECKPOINT + ".tmp")
        torch.save(self.trainer.state_dict(), tmp)
        os.replace(tmp, self.dir / CHECKPOINT)

    def events(self) -> Iterator[Event]:
        every = self.cfg.train.checkpoint_every
        last_ckpt = self.trainer.step
        try:
            for ev in self.trainer.events():
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
        except Exception as e:  # an engine fault: record it, keep what was written
            msg = f"{type(e).__name__}: {e}"
            self._abort("failed", msg, traceback.format_exc())
            yield RunFinished("failed", self.summary, msg)
        finally:
            self.log.close()

    def _abort(self, status: str, msg: str, tb: str = "") -> None:
        self.status = status
        self.summary = self.trainer.summary(status)
        if msg:
            self.summary["error"] = msg
        try:
            self.checkpoint()
        except Exception:  # noqa: BLE001 - the run log matters more than the checkpoint
            pass
        if tb:
            (self.dir / "error.txt").write_text(tb)
        self.log.summary = self.summary
        self.log.write_summary()
