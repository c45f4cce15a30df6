"""Where runs, groups and paper directories are made, and their config.json, group.json, results.csv and
paper.json read and written.

The other concepts of the run directory each have their module in this package, and the names the rest of
the code imports come from the package itself (engine/rundir/__init__.py). A writer (`grok run`,
`grok-tui`, a sweep member) holds `RunLock` (lock.py), an `flock` the kernel releases when the process dies;
readers never take it. The faces read a run or a group through engine/records/run.py and engine/records/group.py.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.config import ConfigError, RunConfig, from_dict
from engine.rundir.atomic import json_object, unique_dir, write_csv_atomic, write_json_atomic
from engine.rundir.csvlog import read_csv
from engine.rundir.destination import PAPER, RUN, check_root
from engine.rundir.files import CONFIG, GROUP_FILE, PAPER_FILE, RESULTS
from engine.rundir.lock import LOCK_FILE, RunInUse, lock_holder
from engine.rundir.schema import check_config, check_group, check_paper
from engine.rundir.writer import RunWriteError

__all__ = [
    "RunDirError", "empty_run_dir", "link_run", "new_paper_dir", "new_run_dir", "read_config", "read_config_doc",
    "read_group_doc", "read_paper_doc", "read_results", "short_name", "write_paper_doc", "write_results",
]  # fmt: skip


class RunDirError(ConfigError):
    """The output directory cannot be created or written."""


def new_run_dir(root: Path, preset: str, seed: int) -> Path:
    """runs/<YYYYmmdd-HHMMSS>-<preset>-s<seed>/, with a -N suffix if that name is taken; never inside a run,
    a group or a paper directory (engine/rundir/destination.py)."""
    check_root(root, RUN)
    try:
        name = re.sub(r"[^A-Za-z0-9_.+=-]", "_", preset)[:64].lstrip(".") or "custom"  # never a path
        path = unique_dir(root, f"{time.strftime('%Y%m%d-%H%M%S')}-{name}-s{seed}")
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise RunDirError(f"cannot write run directory under {root}: {e.strerror or e}") from None
    return path


def short_name(name: str) -> str:
    """A run directory's name without the `YYYYmmdd-HHMMSS-` prefix `new_run_dir` gives it."""
    parts = name.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit() else name


def empty_run_dir(run_dir: Path) -> None:
    """Make a run directory, or empty one whose earlier start left no checkpoint (the lock file stays).

    A directory another live process writes is left alone: `RunInUse` names that process.
    """
    pid = lock_holder(run_dir)
    if pid is not None:
        raise RunInUse(f"{run_dir} is in use by pid {pid or '?'}")
    run_dir.mkdir(parents=True, exist_ok=True)
    for f in run_dir.iterdir():
        if f.is_file() and f.name != LOCK_FILE:
            f.unlink()


def link_run(run_dir: Path, link: Path) -> None:
    """`link` (a new name in a group directory) made a relative link to the run directory `run_dir`."""
    try:
        link.symlink_to(os.path.relpath(run_dir.resolve(), link.parent.resolve()), target_is_directory=True)
    except OSError as e:
        raise RunDirError(f"cannot link {link} to {run_dir}: {e.strerror or e}") from None


def read_config_doc(run_dir: str | Path) -> dict[str, Any]:
    """config.json as written (with its `_meta`); ConfigError naming the file when it is unusable."""
    path = Path(run_dir) / CONFIG
    try:
        return check_config(path, json_object(path))
    except OSError:
        raise ConfigError(f"{run_dir}: not a run directory (no {CONFIG})") from None


def read_config(run_dir: Path) -> RunConfig:
    return from_dict(read_config_doc(run_dir), str(Path(run_dir) / CONFIG))


def _checked_doc(
    d: Path, name: str, kind: str, check: Callable[[Path, dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """The JSON object `d/name` as `check` (engine/rundir/schema.py) passes it; ConfigError naming the file."""
    path = d / name
    if not path.is_file():
        raise ConfigError(f"{d}: not a {kind} directory (no {name})")
    try:
        return check(path, json_object(path))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None


# --- groups and members (engine/records/group_dir.py, engine/sweep/member.py) -------------------


def read_group_doc(group_dir: str | Path) -> dict[str, Any]:
    """group.json, its fields and each member's checked (engine/rundir/schema.py); ConfigError naming the file."""
    return _checked_doc(Path(group_dir), GROUP_FILE, "sweep group", check_group)


def read_results(group_dir: str | Path) -> list[dict[str, str]]:
    """results.csv's rows as strings ('' = none); a torn last line (a killed sweep) is dropped."""
    return read_csv(Path(group_dir) / RESULTS)


def write_results(group_dir: str | Path, columns: list[str], rows: list[dict[str, Any]]) -> None:
    """Replace results.csv atomically and durably (`replace_atomic`)."""
    write_csv_atomic(Path(group_dir) / RESULTS, [columns, *([r.get(c, "") for c in columns] for r in rows)])


# --- a whole-paper run's directory (engine/records/paper.py) ------------------------------------


def new_paper_dir(root: Path) -> Path:
    """<out>/<YYYYmmdd-HHMMSS>-paper/, with a -N suffix if taken; RunDirError if it cannot be made, and never
    inside a run, a group or a paper directory (engine/rundir/destination.py)."""
    check_root(root, PAPER)
    try:
        return unique_dir(Path(root), f"{time.strftime('%Y%m%d-%H%M%S')}-paper")
    except OSError as e:
        raise RunDirError(f"cannot create paper directory under {root}: {e.strerror or e}") from None


def read_paper_doc(paper_dir: str | Path) -> dict[str, Any]:
    """paper.json, its fields, sweeps and segments checked (engine/rundir/schema.py); ConfigError naming the file."""
    return _checked_doc(Path(paper_dir), PAPER_FILE, "paper", check_paper)


def write_paper_doc(paper_dir: str | Path, doc: dict[str, Any]) -> None:
    """Replace paper.json atomically and durably (`write_json_atomic`); RunDirError, one line, on a failed write."""
    path = Path(paper_dir) / PAPER_FILE
    try:
        write_json_atomic(path, doc)
    except OSError as e:
        raise RunDirError(str(RunWriteError(path, e))) from None
