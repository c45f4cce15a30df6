"""The run directory's lock: one writer at a time, released by the kernel however the writer dies.

`grok run`, `grok run --resume`, `grok-tui` and sweep members hold `RunLock` while they write;
`grok show`, `export`, `ls` and the TUI's readers only ask `lock_holder` and never take it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from engine.config import ConfigError

LOCK_FILE = ".lock"  # flock'ed by the run's writer; holds its pid as text


class RunInUse(ConfigError):
    """Another live process writes this run directory."""


def _read_pid(fh: Any) -> int | None:
    fh.seek(0)
    text = fh.read(32).strip()
    return int(text) if text.isdigit() else None


def lock_holder(path: str | Path) -> int | None:
    """The pid of a live process that holds the run's lock, else None. Never blocks, never waits.

    The probe takes a shared lock for an instant and drops it; a writer that meets it retries (see
    `RunLock`), so readers never make a writer fail.
    """
    try:
        fh = open(Path(path) / LOCK_FILE)  # noqa: SIM115 - only the open's OSError is caught; `with fh` closes it
    except OSError:
        return None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = None
            for _ in range(100):  # the holder writes its pid just after it takes the lock
                pid = _read_pid(fh)
                if pid:
                    break
                time.sleep(0.001)
            return pid or 0
        except OSError:
            return None
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return None


class RunLock:
    """Held by the one process that writes a run directory; a second writer gets `RunInUse`.

    `with RunLock(run_dir): ...`, or `acquire()` / `release()`. The lock is an `flock` on
    `run_dir/.lock`, so the kernel drops it when the holder dies in any way (SIGKILL included); the
    file stays and is reused. Readers (show, export, the TUI's open and compare) never take it.
    """

    # A reader's probe holds a shared lock for microseconds, a writer for the whole run: a writer
    # that meets a lock whose pid file names no live process waits out a probe for up to this long.
    RETRY_S = 5.0

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fh: Any = None

    def acquire(self) -> RunLock:
        if self._fh is not None:
            return self
        try:
            fh = open(self.path / LOCK_FILE, "a+")  # noqa: SIM115 - kept open while the lock is held
        except OSError as e:
            raise ConfigError(f"{self.path}: cannot write run directory: {e.strerror or e}") from None
        deadline = time.monotonic() + self.RETRY_S
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                pid = _read_pid(fh)
                if time.monotonic() > deadline or (pid and _alive(pid)):  # a writer, not a reader's probe
                    fh.close()
                    raise RunInUse(f"{self.path} is in use by pid {pid or '?'}") from None
                time.sleep(0.005)
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            with contextlib.suppress(OSError):
                fh.seek(0)
                fh.truncate()
            fh.close()  # closing the file drops the flock

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
