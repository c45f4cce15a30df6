"""Durable writes into a run or group directory: a file replaced whole, never seen half-written."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from engine.config import ConfigError
from engine.rundir.safetext import clean_text


def fsync_path(path: Path) -> None:
    """fsync a file, or a directory to make a rename inside it durable (POSIX: the entry lives there)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_atomic(path: Path, write: Callable[[Path], Any]) -> None:
    """Write `path` through `write(tmp_path)`, fsync it, rename it over `path`, fsync the directory.

    A reader sees the old file or the new one, never a part; a crash leaves at most a `.tmp` file,
    and a failure (a full disk) removes it before the error goes on.
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        write(tmp)
        fsync_path(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_path(path.parent)


def write_json_atomic(path: Path, obj: Any) -> None:
    text = json.dumps(obj, indent=2, default=str) + "\n"
    replace_atomic(path, lambda tmp: tmp.write_text(text))


def write_csv_atomic(path: Path, rows: Iterable[Iterable[Any]]) -> None:
    """A CSV file (header first) replaced whole, through `replace_atomic`."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="") as fh:
            csv.writer(fh).writerows(rows)

    replace_atomic(path, write)


def json_object(path: Path) -> dict[str, Any]:
    """A JSON file that must hold an object; ConfigError naming the file otherwise (OSError passes)."""
    try:
        doc = json.loads(path.read_bytes())
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{path}: malformed JSON ({clean_text(e)})") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a JSON object, found {type(doc).__name__}")
    return doc


def unique_dir(root: Path, base: str) -> Path:
    """Create root/base, or root/base-2, -3, ... if taken; OSError if none can be made."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(1, 1000):
        path = root / (base if i == 1 else f"{base}-{i}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise OSError(f"too many directories named {base}")
