"""A run: a Trainer wired to its run directory. Every face (CLI, TUI, sweeps) iterates a Run."""

from __future__ import annotations

import contextlib
import dataclasses
import time
import traceback
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from engine.config import ConfigError, RunConfig, from_dict
from engine.config.resolve import resolve
from engine.events import Event, RunFinished, RunStarted, Status, StepsTaken
from engine.rundir import (
    CHECKPOINT,
    CONFIG,
    Keeper,
    RunLock,
    RunLog,
    RunWriteError,
    clean_text,
    csv_header,
    load_checkpoint,
    new_run_dir,
    read_config,
    read_config_doc,
    read_summary,
    save_checkpoint,
    truncate_logs,
    write_error,
    write_json_atomic,
)
from engine.rundir.lineage import lineage
from engine.summary import RunSummary
from engine.train.footprint import check_run

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
        "train.keep_every",
        "train.keep_budget_mb",
        "train.stop_metric",
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


def config_changes(saved: dict[str, Any], current: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Dotted keys whose value differs between the checkpoint's config and config.json."""
    a, b = flat(saved), flat(current)
    return {k: (a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)}


class RunSink:
    """One run directory as the consumer of a run's events: the lock, the log, a checkpoint every
    train.checkpoint_every steps and at the end, and the failure path.

    `Run` feeds it one Trainer's events; a batched sweep (engine/sweep/batched.py) one sink per member,
    so a member that fails ends as a single run does: status `failed`, error.txt, a last checkpoint.
    `state()` is the run's checkpoint dict now, `summary(status)` its summary.json fields.
    """

    def __init__(
        self,
        run_dir: Path,
        cfg: RunConfig,
        lock: RunLock,
        state: Callable[[], dict[str, Any]],
        summary: Callable[[str], dict[str, Any]],
        *,
        resume: bool = False,
        step: int = 0,
    ) -> None:
        self.dir, self.cfg = run_dir, cfg
        self._lock, self._state, self._summary = lock, state, summary
        self.log = RunLog(run_dir, cfg, resume=resume)
        self.status: str = Status.RUNNING
        self.summary: dict[str, Any] = {}
        self.fault = ""  # a one-line machine fault (a full disk) that ended the run, for the faces to print
        self._last_ckpt = step
        self.keeper = Keeper(
            run_dir, cfg
        )  # train.keep_every: kept checkpoints for `grok fork` (engine/rundir/checkpoints.py)
        self.lineage: dict[str, Any] = {}  # a fork's parent, fork_step, ancestors, interventions (engine/train/fork.py)
        if resume:
            self.keeper.resumed(step)
            self.lineage = lineage(read_summary(run_dir))

    @property
    def ended(self) -> bool:
        """True once the run's RunFinished went through, or the failure path ran."""
        return self.status != Status.RUNNING

    def checkpoint(self) -> None:
        """Write checkpoint.pt atomically and durably (`save_checkpoint`)."""
        save_checkpoint(self.dir, self._state(), self.cfg)

    def handle(self, ev: Event) -> Event:
        """Log `ev` and checkpoint on its cadence; returns the event as the faces see it."""
        if isinstance(ev, RunStarted):
            ev = dataclasses.replace(ev, run_dir=str(self.dir))
        if isinstance(ev, RunFinished):
            self.checkpoint()
            if self.lineage:
                ev = dataclasses.replace(ev, summary=RunSummary.written({**ev.summary.doc(), **self.lineage}))
            self.status, self.summary = ev.status, ev.summary.doc()
        self.log.handle(ev)
        keep = self.keeper.observe(ev)
        every = self.cfg.train.checkpoint_every
        if isinstance(ev, StepsTaken) and (keep or ev.step // every > self._last_ckpt // every):
            self.checkpoint()
            if ev.step // every > self._last_ckpt // every:
                self._last_ckpt = ev.step
            if keep:
                self.keeper.keep(self.dir / CHECKPOINT, ev.step, keep)
        return ev

    def interrupted(self) -> None:
        """The consumer stopped iterating (the TUI quit): close the log as interrupted."""
        self._abort(Status.INTERRUPTED, "")

    def failed(self, e: BaseException) -> RunFinished:
        """The run ended on `e`: a write fault (one line, no checkpoint) or an engine fault (error.txt)."""
        if isinstance(e, RunWriteError):  # a full disk, a read-only remount: one line, no traceback
            self.fault = str(e)
            self._abort(Status.FAILED, self.fault, checkpoint=False)
            return RunFinished(Status.FAILED, RunSummary.written(self.summary), self.fault)
        msg = f"{type(e).__name__}: {e}"
        self._abort(Status.FAILED, msg, "".join(traceback.format_exception(e)))
        return RunFinished(Status.FAILED, RunSummary.written(self.summary), msg)

    def close(self) -> None:
        """Close the log and release the lock (idempotent)."""
        self.log.close()
        self._lock.release()

    def _abort(self, status: str, msg: str, tb: str = "", checkpoint: bool = True) -> None:
        """Best effort on the way out: each write may itself fail (a full disk) and is then skipped."""
        self.status = status
        self.summary = {**self._summary(status), **self.lineage}
        if msg:
            self.summary["error"] = msg
        if checkpoint:
            with contextlib.suppress(Exception):  # any fault: the run log matters more than the checkpoint
                self.checkpoint()
        if tb:
            write_error(self.dir, tb)
        self.log.summary = self.summary
        with contextlib.suppress(OSError, RunWriteError):
            self.log.write_summary()


@dataclasses.dataclass
class Resume:
    """A run directory about to continue from its checkpoint: `read` loads and checks it before a trainer
    exists; `finish` brings its logs back to the checkpoint's step once the trainer has taken the state.
    `Run` resumes one this way, a batched sweep (engine/sweep/batched.py) each member of a stacked model."""

    dir: Path
    cfg: RunConfig
    state: dict[str, Any]
    doc: dict[str, Any]
    saved: Any
    changed: dict[str, tuple[Any, Any]]

    @classmethod
    def read(cls, d: Path, cfg: RunConfig) -> Resume:
        """The checkpoint of `d`, refused (ConfigError) where the config changed in a key a resume may not change."""
        state = load_checkpoint(d)
        doc = read_config_doc(d)
        saved = state.get("config")
        changed: dict[str, tuple[Any, Any]] = {}
        if isinstance(saved, dict):
            # through from_dict, so that a key added since the checkpoint compares at its default;
            # a ConfigError is a key since removed: compared as written, and named below
            with contextlib.suppress(ConfigError):
                saved = from_dict(saved, str(d / CHECKPOINT)).to_dict()
            changed = config_changes(saved, cfg.to_dict())
            refused = sorted(k for k in changed if k not in RESUMABLE_KEYS)
            if refused:
                raise ConfigError(
                    f"{d / CONFIG}: changed since the checkpoint: {', '.join(refused)} "
                    "(a resume may change only " + ", ".join(sorted(RESUMABLE_KEYS)) + ")"
                )
        return cls(d, cfg, state, doc, saved, changed)

    def mismatch(self, e: BaseException) -> ConfigError:
        """The one-line error for a checkpoint the trainer could not take."""
        reason = clean_text(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
        return ConfigError(f"{self.dir / CHECKPOINT}: does not match {self.dir / CONFIG} ({reason[:200]})")

    def finish(self, columns: tuple[str, ...] | list[str], step: int) -> None:
        """The logs back to the checkpoint's `step`, and the config's resume history; a trainer whose
        `columns` differ from metrics.csv's is refused."""
        d = self.dir
        header = csv_header(d / "metrics.csv")
        if header and tuple(header) != tuple(columns):
            extra = sorted(set(columns) ^ set(header))
            raise ConfigError(
                f"{d / 'metrics.csv'}: its columns differ from this run's ({', '.join(extra) or 'order'}); "
                "start a new run"
            )
        t = self.cfg.train
        # Every row log of the run-file table (engine/rundir/files.py) goes back to the checkpoint's step. A row
        # at that step that is off the evaluation cadence was written where a run stopped; an uninterrupted
        # run has none, so it goes (bit-for-bit resume, F13).
        truncate_logs(d, step, keep_last=lambda s: s % t.eval_every == 0 or s == t.max_steps)
        changed = self.changed
        if not isinstance(self.saved, dict):  # a checkpoint from before configs were saved in it
            changed = config_changes(self.doc, self.cfg.to_dict())
        if changed:
            meta = self.doc["_meta"] if isinstance(self.doc.get("_meta"), dict) else {}
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


class RunHandle(Protocol):
    """What a face holds of a run while it trains: the event stream it consumes, and the controls it
    calls from another thread (the TUI's keys and stop signals). `Run` is one; the TUI's tests script others."""

    def events(self) -> Generator[Event, None, None]:
        """The run's events; closing the generator early ends the run as interrupted."""
        ...

    def stop(self, status: str = Status.INTERRUPTED) -> None:
        """End the run at its next step with `status` (a `Status`)."""
        ...

    def pause(self) -> None: ...

    def unpause(self) -> None: ...


class Run:
    """Owns a Trainer and its run directory's `RunSink`; `events()` trains, logs and checkpoints."""

    def __init__(
        self, cfg: RunConfig, out: str | Path = "runs", *, run_dir: Path | None = None, _resume: Path | None = None
    ) -> None:
        """A new run in a new directory under `out`, or in `run_dir` (an existing, empty directory:
        a sweep member's planned one); `Run.from_checkpoint` continues one from its checkpoint."""
        self.cfg = cfg
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
            from engine.train.logged import check_columns

            check_columns(cfg)  # a setting that names a column this run does not log: before anything is written
            self.trainer = self._trainer(None)
            self.dir = run_dir if run_dir is not None else new_run_dir(Path(out), cfg.preset, cfg.train.seed)
            self._lock = RunLock(self.dir).acquire()
        self.sink = RunSink(
            self.dir,
            cfg,
            self._lock,
            self.trainer.state_dict,
            self.trainer.summary,
            resume=_resume is not None,
            step=self.trainer.step,
        )

    @property
    def status(self) -> str:
        return self.sink.status

    @property
    def summary(self) -> dict[str, Any]:
        return self.sink.summary

    @property
    def fault(self) -> str:
        return self.sink.fault

    def _trainer(self, state: dict[str, Any] | None) -> Any:
        from engine.train.trainer import Trainer

        check_run(self.cfg)  # refuse what cannot fit before a byte is allocated (issue 13, F2)
        try:
            return Trainer(self.cfg, state=state)
        except ConfigError:
            raise
        except ValueError as e:  # e.g. an unavailable device
            raise ConfigError(str(e)) from None

    def _open_resumed(self, d: Path) -> None:
        resume = Resume.read(d, self.cfg)
        try:
            self.trainer = self._trainer(resume.state)
        except ConfigError:
            raise
        except (KeyError, RuntimeError, ValueError, TypeError, IndexError, AttributeError) as e:
            raise resume.mismatch(e) from None
        resume.finish(self.trainer.columns, self.trainer.step)

    @classmethod
    def from_checkpoint(cls, run_dir: str | Path, max_steps: int | None = None, device: str | None = None) -> Run:
        """Continue a run from its checkpoint, bit-for-bit on the CPU; `max_steps` may extend it."""
        path = Path(run_dir)
        cfg = read_config(path)
        cfg = resolve(cfg, steps=max_steps, device=device)  # the run's own config: only these may change
        if read_summary(path).status == Status.FINISHED and max_steps is None:
            raise ConfigError(f"{path}: run already finished; pass --steps N to extend it")
        return cls(cfg, _resume=path)

    # control
    def stop(self, status: str = Status.INTERRUPTED) -> None:
        self.trainer.stop(status)

    def pause(self) -> None:
        self.trainer.pause()

    def unpause(self) -> None:
        """Let a paused run go on (`Run.from_checkpoint` is the other thing: continue a run from its checkpoint)."""
        self.trainer.unpause()

    def close(self) -> None:
        """Release the run directory's lock (done when `events()` ends; idempotent)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def checkpoint(self) -> None:
        """Write checkpoint.pt atomically and durably (`save_checkpoint`)."""
        self.sink.checkpoint()

    def events(self) -> Generator[Event, None, None]:
        stream = self.trainer.events()
        try:
            for ev in stream:
                yield self.sink.handle(ev)
        except GeneratorExit:
            self.sink.interrupted()
            raise
        except Exception as e:  # noqa: BLE001 - an engine or write fault: record it, keep what was written
            yield self.sink.failed(e)
        finally:
            stream.close()  # the trainer's loop thread ends here, whatever ended the run
            self.sink.close()
            self.close()


if TYPE_CHECKING:  # mypy checks here that Run satisfies RunHandle
    _RUN_IS_A_HANDLE: type[RunHandle] = Run
