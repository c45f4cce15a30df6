"""Where a command may write: the one rule every face applies to a path a user names (-o, --out, --csv, --keep).

A run owns its directory and a group (a sweep's, or a kept copy of one) owns its own: no command writes a
file inside either, makes a run inside a run, a group or a paper directory, or makes a group inside a run or
a group. What the design puts there itself is not a destination a user names, so the rule never sees it: a
group's own members, a paper's own groups, a fork beside its parent (`fork_root` lets a member's fork into
its group), `grok report --keep` replacing the kept copy it made (engine/rundir/keep.py) and the lab's `e`,
which writes `<run>.csv` beside the run. A refusal is one line that names the directory and what it is, and
comes before anything is written.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.config import ConfigError
from engine.rundir.files import KEPT, is_group, is_paper_dir, is_run_dir

RUN, GROUP, PAPER = "run", "group", "paper"


class DestinationError(ConfigError):
    """A destination inside a run's, a group's or a paper's directory."""


def kind(d: Path) -> str | None:
    """What owns directory `d`: RUN, GROUP (a sweep's or a kept group), PAPER, or None."""
    if is_run_dir(d):
        return RUN
    if is_group(d):
        return GROUP
    if is_paper_dir(d):
        return PAPER
    return None


def described(d: Path, what: str) -> str:
    if what == RUN:
        return f"{d} is a run directory"
    if what == GROUP:
        return f"{d} is a kept group" if (d / KEPT).is_file() else f"{d} is a sweep group directory"
    return f"{d} is a paper directory"


def owner(path: str | Path) -> tuple[Path, str] | None:
    """The nearest directory at or above `path` that a run, a group or a paper owns, and which; None if none.

    Both spellings of the path are walked: as written (a group's link to a member is inside the group) and
    with its links resolved (a link that leads into a run leads inside it)."""
    written = Path(os.path.abspath(path))
    found: list[tuple[int, Path, str]] = []
    for chain in (written, written.resolve()):
        for depth, d in enumerate((chain, *chain.parents)):
            what = kind(d)
            if what is not None:
                found.append((depth, d, what))
                break
    if not found:
        return None
    _, d, what = min(found, key=lambda f: f[0])
    return _shown(d, written), what


def _shown(d: Path, written: Path) -> Path:
    """`d` as the user would write it: relative to the working directory when it is under it."""
    try:
        return d.relative_to(Path.cwd()) if d != Path.cwd() else Path(".")
    except ValueError:
        return d


def check_file(path: str | Path, option: str) -> None:
    """A file a command writes (an export, a figure, a table): never inside a run's, group's or paper's directory,
    so never over a file one of them wrote. "-" (stdout) passes."""
    if str(path) == "-":
        return
    found = owner(path)
    if found is not None:
        d, what = found
        raise DestinationError(f"{option} {path}: {described(d, what)}; write the file outside it (nothing written)")


def check_root(root: str | Path, makes: str, option: str = "--out", beside: Path | None = None) -> None:
    """A directory a command makes a new `makes` (RUN, GROUP or PAPER) under: a run goes in no run, group or
    paper; a group in no run or group (a paper directory holds its groups); a paper in none of them. `beside`:
    the one owned directory allowed (a fork's parent's own directory: a member's fork stays in its group)."""
    found = owner(root)
    if found is None:
        return
    d, what = found
    if beside is not None and Path(os.path.abspath(root)).resolve() == beside.resolve():
        return
    if makes == GROUP and what == PAPER and Path(os.path.abspath(root)).resolve() == Path(d).resolve():
        return
    made = {RUN: "a run", GROUP: "a sweep group", PAPER: "a paper directory"}[makes]
    raise DestinationError(f"{option} {root}: {described(d, what)}; {made} cannot go inside it (nothing written)")
