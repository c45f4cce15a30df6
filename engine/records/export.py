"""Tidy CSV export of runs and sweep groups; the CLI and the TUI both call `export_runs`.

Every row is one metrics.csv (or tokens.csv) row with the run's identity in front: run, preset and
seed, and for a sweep's member also its group, arm, member id and one column per swept key
(`optim.lr_ratio`, `data.op`, ...), so arms and grid cells can be plotted without a join.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from engine.config import ConfigError, RunConfig
from engine.records.run import check_run
from engine.rundir import clean_text, is_group, is_run_dir, read_config_doc, read_csv, read_summary
from engine.rundir.lineage import lineage

RUN_COLUMNS = ("run", "preset", "seed")
GROUP_COLUMNS = ("group", "arm", "member")
FORK_COLUMNS = ("parent", "fork_step")  # a fork's (docs/FORK.md)


@dataclass(frozen=True)
class Source:
    """A run directory to export, with the columns that say which sweep member it is (if any)."""

    path: Path
    member: dict[str, str] = field(default_factory=dict)  # group, arm, member and the swept keys


def _cell(v: object) -> str:
    if isinstance(v, str):
        return _text(v)
    return "true" if v is True else "false" if v is False else clean_text(v)


def _value(s: str) -> str:
    """A cell of metrics.csv or tokens.csv: a number as written, anything else (a crafted file) as text."""
    try:
        float(s)
    except ValueError:
        return _text(s)
    return s


def _text(s: str) -> str:
    """A text cell a spreadsheet shows as text: control characters stripped, and a leading = + - @
    quoted with ' so that `=cmd|' /C calc'!A0` from a shared config.json is no formula (OWASP's
    advice on CSV injection). Numbers are never text cells, so a negative value stays a number."""
    s = clean_text(s)
    return "'" + s if s.startswith(("=", "+", "-", "@")) else s


def group_sources(group_dir: Path) -> list[Source]:
    """A group's members that have a run directory, in member order, with their group columns."""
    from engine.records.group import check_results
    from engine.records.group_dir import Group, member_fields

    check_results(Group.open(group_dir))  # a results.csv that lies about its group: one line
    members = member_fields(group_dir).items()  # group, arm, member and the swept keys
    # a member that has not started has no config.json yet
    return [Source(d, {k: _cell(v) for k, v in fields.items()}) for d, fields in members if is_run_dir(d)]


def _as_member(run_dir: Path) -> Source:
    """A run directory, with its group columns when it is a member of the group it sits in."""
    parent = run_dir.resolve().parent
    if is_group(parent):
        for s in group_sources(parent):
            if s.path.resolve() == run_dir.resolve():
                return Source(run_dir, s.member)
    return Source(run_dir)


def resolve(paths: Iterable[str | Path | Source]) -> list[Source]:
    """Run directories, sweep groups (their members) and folders of runs, as one list of sources."""
    out: list[Source] = []
    for p in paths:
        if isinstance(p, Source):
            out.append(p)
            continue
        d = Path(p)
        if is_run_dir(d):
            out.append(_as_member(d))
        elif is_group(d):
            out.extend(group_sources(d))
        elif d.is_dir() and any(is_run_dir(c) for c in d.iterdir() if c.is_dir()):
            out.extend(Source(c) for c in sorted(d.iterdir()) if is_run_dir(c))
        else:
            raise ConfigError(f"{d}: not a run directory (no config.json) nor a sweep group (no group.json)")
    return out


def _run_meta(run_dir: Path) -> dict[str, str]:
    doc = read_config_doc(run_dir)
    train = doc.get("train")
    train = train if isinstance(train, dict) else {}
    # a kept run's config.json leaves out the defaults (engine/rundir/keep.py): a missing seed is the default's
    seed = train.get("seed", RunConfig().train.seed)
    return {"run": _text(run_dir.name), "preset": _cell(doc.get("preset", "")), "seed": _cell(seed)}


def _fork_meta(run_dir: Path) -> dict[str, str]:
    """A fork's parent and fork step as export columns ({} for a run that is no fork, engine/rundir/lineage.py)."""
    lin = lineage(read_summary(run_dir))
    return {"parent": _cell(lin["parent"]), "fork_step": _cell(lin.get("fork_step"))} if "parent" in lin else {}


def _with_interventions(run_dir: Path, data: list[dict[str, str]]) -> list[dict[str, str]]:
    """metrics.csv's rows with an `intervention` cell: what changed after the row's step and before the next
    row's, as `kind target` items joined by `; ` (engine/rundir/lineage.py interventions.csv)."""
    from engine.rundir.lineage import read_interventions

    events = read_interventions(run_dir)
    out = []
    for i, r in enumerate(data):
        step = float(r.get("step") or "nan")
        nxt = float(data[i + 1]["step"]) if i + 1 < len(data) else float("inf")
        cell = "; ".join(f"{e['kind']} {e['target']}" for e in events if step <= e["step"] < nxt)
        out.append({**r, "intervention": cell})
    return out


def export_rows(
    sources: Iterable[Source | Path],
    metrics: list[str] | None = None,
    tokens: bool = False,
    interventions: bool = False,
) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows: metrics.csv (or tokens.csv, or a fork's interventions.csv) of every run, its identity
    columns in front (and a fork's parent and fork step)."""
    srcs = [s if isinstance(s, Source) else Source(Path(s)) for s in sources]
    header: list[str] = list(RUN_COLUMNS)
    if any(s.member for s in srcs):
        header = list(dict.fromkeys([*header, *GROUP_COLUMNS, *(k for s in srcs for k in s.member)]))
    rows: list[dict[str, str]] = []
    name = "interventions.csv" if interventions else "tokens.csv" if tokens else "metrics.csv"
    forks = {s.path: _fork_meta(s.path) for s in srcs}
    if any(forks.values()):  # a fork's parent and step, and its interventions on the rows they follow
        header += [*FORK_COLUMNS, *(["intervention"] if not (tokens or interventions) else [])]
    for s in srcs:
        check_run(s.path)  # a closed run's logs that lie about it: one line, not wrong rows
        meta = {**_run_meta(s.path), **forks[s.path], **s.member}
        data = read_csv(s.path / name)
        if forks[s.path] and not (tokens or interventions):
            data = _with_interventions(s.path, data)
        if data:
            cols = list(data[0].keys())
            if metrics and not (tokens or interventions):
                unknown = [m for m in metrics if m not in cols]
                if unknown:
                    raise ConfigError(f"{s.path}: unknown metric(s) {', '.join(unknown)}; have {', '.join(cols)}")
                if "step" not in cols:
                    raise ConfigError(f"{s.path / name}: no step column")
                cols = ["step"] + [m for m in metrics if m != "step"] + [c for c in cols if c == "intervention"]
            header += [c for c in cols if c not in header]
            rows.extend({**meta, **{c: _value(r[c]) for c in cols}} for r in data)
    return header, rows


def export_runs(
    paths: Iterable[str | Path | Source],
    out: str | Path | IO[str] = "-",
    metrics: list[str] | None = None,
    tokens: bool = False,
    interventions: bool = False,
) -> int:
    """Write the tidy CSV of runs and groups to a path, or to stdout for "-"; returns the rows written."""
    sources = resolve(paths)
    header, rows = export_rows(sources, metrics, tokens, interventions)
    if out == "-":
        fh: IO[str] = sys.stdout
        close = False
    elif isinstance(out, str | Path):
        try:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            fh = open(out, "w", newline="")  # noqa: SIM115 - closed below, also on a failed write
        except OSError as e:
            raise ConfigError(f"cannot write {out}: {e.strerror or e}") from None
        close = True
    else:
        fh, close = out, False
    try:
        csv.writer(fh).writerow([_text(h) for h in header])  # header names may come from a crafted file
        csv.DictWriter(fh, fieldnames=header, restval="").writerows(rows)
        fh.flush()
        if close:
            fh.close()
    except OSError as e:
        name = "stdout" if fh is sys.stdout else str(out)
        if close:
            with contextlib.suppress(OSError):
                fh.close()
            if Path(str(out)).is_file():  # a regular file half written; never a device such as /dev/full
                Path(str(out)).unlink(missing_ok=True)
        if e.errno == errno.ENOSPC:
            raise ConfigError(f"no space left on device writing {name}") from None
        raise ConfigError(f"cannot write {name}: {e.strerror or e}") from None
    return len(rows)
