"""`grok ls [DIR]`: the runs and sweep groups under ./runs (or DIR), newest first, one line each."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from engine.train.phases import GENERALIZED
from grok_tui.commands.width import ELLIPSIS, columns, echo
from grok_tui.commands.width import table as text_table
from grok_tui.errors import user_errors

if TYPE_CHECKING:
    from engine.records.run import RunRecord


def _finite(v: float | None) -> float | None:
    """A phase's value as ls shows it: None where it is not a finite number (NaN: not measured)."""
    return v if v is not None and math.isfinite(v) else None


def run_entry(rec: RunRecord) -> dict[str, Any]:
    """What ls and show say about one run: status from the lock, progress and phases from the record."""
    from engine.rundir import clean_text

    ph = rec.phases
    return {
        "kind": "run",
        "path": str(rec.path),
        "name": clean_text(rec.path.name),
        "preset": rec.preset,
        "status": rec.status,
        "pid": rec.pid,
        "step": rec.step,
        "max_steps": rec.config.train.max_steps,
        "memorized_step": ph.memorized_step,
        "generalized_step": ph.generalized_step,
        "grokking_delay": ph.delay,
        "early_stop_step": ph.early_stop_step,
        "final_train_acc": _finite(ph.final_train_acc),
        "best_val_acc": _finite(ph.best_val_acc),
        "final_val_acc": _finite(ph.final_val_acc),
        "wall_s": rec.wall_s,
        "created": clean_text((rec.meta or {}).get("created", "")),
        **_lineage(rec),
    }


def _lineage(rec: RunRecord) -> dict[str, Any]:
    """A fork's parent (relative to its own directory's parent) and fork step (docs/FORK.md)."""
    from engine.rundir import clean_text

    lin = rec.lineage
    return {"parent": clean_text(lin["parent"]), "fork_step": lin.get("fork_step")} if "parent" in lin else {}


def fork_tree(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries with each fork listed under its parent (by fork step), `depth` set: the fork tree.
    A fork whose parent is not in the listing stays where it was, at depth 0."""
    where = {Path(e["path"]).resolve(): e for e in found if e["kind"] == "run"}
    children: dict[int, list[dict[str, Any]]] = {}
    roots = []
    for e in found:
        parent = where.get((Path(e["path"]).parent / e["parent"]).resolve()) if e.get("parent") else None
        if parent is not None and parent is not e:
            children.setdefault(id(parent), []).append(e)
        else:
            roots.append(e)
    out: list[dict[str, Any]] = []
    parent_name: list[str] = [""]  # the names of the entries walked into: a fork's parent is the last

    def walk(e: dict[str, Any], depth: int) -> None:
        if any(x is e for x in out):  # a cycle in crafted summaries: each entry once
            return
        out.append({**e, "depth": depth, "under": parent_name[-1]} if depth else e)
        parent_name.append(e["name"])
        for c in sorted(children.get(id(e), []), key=lambda c: (c.get("fork_step") or 0, c["name"])):
            walk(c, depth + 1)
        parent_name.pop()

    for r in roots:
        walk(r, 0)
    return out


def group_entry(path: Path) -> dict[str, Any]:
    """A sweep group: members finished, running (a process holds their run directory) and failed."""
    from engine.events import Status
    from engine.records.group import read_group
    from engine.rundir import clean_text, is_run_dir, lock_holder

    g = read_group(path)
    res = g.results()  # typed rows (engine/records/results.py ResultsRow)
    statuses = [r.status if (r := res.get(m.id)) is not None else None for m in g.members]
    running = sum(1 for c in path.iterdir() if c.is_dir() and is_run_dir(c) and lock_holder(c) is not None)
    walls = [r.wall_s for r in res.values() if r.wall_s is not None]
    n_done = sum(st is not None and st.ended for st in statuses)
    status = "running" if running else ("done" if n_done == len(g.members) else "partial")
    return {
        "kind": "group",
        "path": str(path),
        "name": clean_text(path.name),
        "preset": clean_text(g.preset),
        "status": status,
        "n_members": len(g.members),
        "n_finished": n_done,
        "n_running": running,
        "n_failed": sum(st == Status.FAILED for st in statuses),
        "n_generalized": sum(r.generalized_step is not None for r in res.values()),
        "wall_s": sum(walls) if walls else None,
        "created": clean_text(g.doc.get("created", "")),
    }


def _when(entry: dict[str, Any]) -> float:
    """Creation time for the newest-first order: the recorded one, else the directory's mtime."""
    try:
        return datetime.strptime(entry["created"], "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except (KeyError, ValueError):
        try:
            return Path(entry["path"]).stat().st_mtime
        except OSError:
            return 0.0


def entries(root: Path) -> list[dict[str, Any]]:
    """Every run and group directly under `root`, newest first; a group with its members after it.

    A directory that cannot be read is listed as `unreadable` with the reason, not skipped.
    """
    from engine.records.run import read_run
    from engine.rundir import is_group, is_run_dir

    if is_group(root):  # the group, then its members in member order; an unreadable group is the error
        members = sorted(c for c in root.iterdir() if c.is_dir() and is_run_dir(c))
        return [group_entry(root), *_entries(members)]
    if is_run_dir(root):  # a run named on the command line: an unreadable one is the error, not a row
        return [run_entry(read_run(root))]
    return sorted(_entries(sorted(c for c in root.iterdir() if c.is_dir())), key=_when, reverse=True)


def _entries(candidates: list[Path]) -> list[dict[str, Any]]:
    from engine.config import ConfigError
    from engine.records.run import read_run
    from engine.rundir import clean_text, is_group, is_run_dir

    out: list[dict[str, Any]] = []
    for c in candidates:
        try:
            if is_group(c):
                out.append(group_entry(c))
            elif is_run_dir(c):
                out.append(run_entry(read_run(c)))
        except (ConfigError, OSError) as e:
            out.append({"kind": "run", "path": str(c), "name": clean_text(c.name), "status": "unreadable"})
            out[-1]["error"] = clean_text(e)
    return out


def _cell(v: Any, fmt: str = "{}") -> str:
    return "-" if v is None else fmt.format(v)


def _wall(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:.1f}s" if s < 60 else (f"{s / 60:.1f}m" if s < 3600 else f"{s / 3600:.1f}h")


def row_cells(e: dict[str, Any]) -> list[str]:
    if e["kind"] == "group":
        status = e["status"] + (f" {e['n_running']}" if e["n_running"] else "")
        return [
            e["name"],
            e["preset"] or "-",
            "sweep " + status,
            f"{e['n_finished']}/{e['n_members']} done" + (f", {e['n_failed']} failed" if e["n_failed"] else ""),
            "-",
            f"{e['n_generalized']}/{e['n_members']}",
            "-",
            _wall(e["wall_s"]),
        ]
    if e["status"] == "unreadable":  # the reason follows the table (`unreadable_lines`)
        return [e["name"], "-", "unreadable", "-", "", "", "", ""]
    status = e["status"] + (f" pid {e['pid']}" if e["pid"] else "")
    depth = e.get("depth", 0)
    name = (TREE * (depth - 1) + FORK_MARK if depth else "") + e["name"] + (f" @{e['fork_step']}" if depth else "")
    return [
        name,
        e["preset"] or "-",
        status,
        f"{e['step']}/{_cell(e['max_steps'])}",
        _cell(e["memorized_step"]),
        _cell(e["generalized_step"]),
        _cell(e["final_val_acc"], "{:.3f}"),
        _wall(e["wall_s"]),
    ]


Header = tuple[str, ...]


TREE, FORK_MARK = "  ", "└ "  # a fork sits under its parent, one indent per generation


def unreadable_lines(found: list[dict[str, Any]]) -> list[str]:
    """Each unreadable entry's reason, after the table: `NAME: error` (folded to the terminal by the caller)."""
    return [f"{e['name']}: {e.get('error', '')}" for e in found if e.get("status") == "unreadable"]


def short_name(e: dict[str, Any]) -> str | None:
    """A fork listed under its parent, named by what follows the parent's name: `└ …-fork40` (its @step
    is in that name); None for any other entry."""
    depth, under, name = int(e.get("depth", 0)), str(e.get("under") or ""), str(e["name"])
    if not depth or not under or not name.startswith(under) or name == under:
        return None
    rest = name[len(under) :]
    at = "" if rest.endswith(f"-fork{e.get('fork_step')}") else f" @{e.get('fork_step')}"
    return TREE * (depth - 1) + FORK_MARK + ELLIPSIS + rest + at


def cut_name(name: str, room: int) -> str:
    """A name cut to `room` characters in its middle with …, its fork marker and its start (the date and
    time) and end (preset, seed, fork step) kept: `└ 20261128-0407…mul-s0-fork40`."""
    if len(name) <= room:
        return name
    body = name.lstrip(" ")
    lead = name[: len(name) - len(body)] + (FORK_MARK if body.startswith(FORK_MARK) else "")
    body = name[len(lead) :]
    keep = max(room - len(lead) - 1, 2)
    head = (keep + 1) // 2
    return lead + body[:head] + ELLIPSIS + body[len(body) - (keep - head) :]


def narrow(
    rows: list[list[str]], header: tuple[str, ...], width: int | None = None, shorter: list[str | None] | None = None
) -> tuple[list[list[str]], Header]:
    """The table for an 80-column terminal: without the PRESET column where every name already holds its
    preset (`<date>-<preset>-s<seed>`), and names cut in the middle with … when the lines are still too
    wide (`cut_name`: the date and time, and the preset, seed or fork at the end stay; `--wide` gives whole names)."""
    forks = [r[0].lstrip(TREE).startswith(FORK_MARK) for r in rows]  # a fork under its parent: the same preset
    if all(r[1] == "-" or r[1] in r[0] or fork for r, fork in zip(rows, forks, strict=True)):
        rows, header = [[r[0], *r[2:]] for r in rows], (header[0], *header[2:])
    width = width or columns()
    others = sum(max(len(h), *(len(r[i]) for r in rows)) + 2 for i, h in enumerate(header) if i)
    room = max(width - others, 12)
    for i, r in enumerate(rows):
        if len(r[0]) > room and shorter and shorter[i]:  # a fork under its parent: the part after its name
            r[0] = str(shorter[i])
        r[0] = cut_name(r[0], room)
    return rows, header


def table(rows: list[list[str]], header: tuple[str, ...]) -> str:
    return text_table([[h.upper() for h in header], *rows])


app = typer.Typer()  # `grok ls`, added to the `grok` app by grok_tui/cli.py


@app.command(
    "ls",
    help="List runs and sweep groups, newest first: status (live from the run lock), progress, phases, wall "
    f"time.\n\nGEN for a group counts the members that reached {GENERALIZED} val acc; its WALL is the members' "
    "summed wall time.",
)
@user_errors
def ls(
    root: Annotated[str, typer.Argument(help="Where runs go (the --out of grok run / grok sweep).")] = "runs",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list, for scripts.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Every column and whole names.")] = False,
) -> None:
    from engine.config import ConfigError

    d = Path(root)
    if not d.is_dir():
        raise ConfigError(f"{d}: no such directory (runs go to ./runs unless --out says otherwise)")
    found = fork_tree(entries(d))  # forks under their parents
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    if not found:
        typer.echo(f"no runs or sweep groups in {d}")
        return
    header = ("name", "preset", "status", "step/max", "mem", "gen", "val_acc", "wall")
    rows = [row_cells(e) for e in found]
    typer.echo(table(rows, header) if wide else table(*narrow(rows, header, shorter=[short_name(e) for e in found])))
    for line in unreadable_lines(found):
        echo(line, wide)
