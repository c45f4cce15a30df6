"""A sweep group kept small (`grok report GROUP --keep DIR`): a thin group that reads back as a group.

What docs/REPRODUCTION.md's tables and figures read, and no more: group.json and results.csv as text, and
per member, packed into one members.tar.xz (engine/rundir/pack.py), its config.json, summary.json and a
thinned metrics.csv: the columns that are not empty, at most `max_rows`
evaluations spread over the run at 4 significant digits, and as written the first row, the last TAIL_ROWS,
each column's first and largest value, and the row at every fork step (a fork's *before* is the parent's
own row). A fork keeps its window and the rows up to it that a tail of TAIL_ROWS reads, and no per-token
draw shares or pairs. Also the last spectrum of fourier.csv and joins.csv where the run has them. What a
report reads is copied digit for digit, so `grok report DIR` on the kept directory gives the same tables as
on the group, and `grok figure --claim` draws from it. Machine paths in the recorded command lines are
dropped; `kept.json` says where the data come from (group, preset, commit, command, dates, machine).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.config import ConfigError
from engine.rundir.atomic import json_object, replace_atomic, write_csv_atomic
from engine.rundir.csvlog import csv_lines, number
from engine.rundir.destination import GROUP, check_root
from engine.rundir.dirs import read_config_doc, read_group_doc, read_results, write_results
from engine.rundir.files import CONFIG, FOURIER, GROUP_FILE, JOINS, KEPT, METRICS, RESULTS, SUMMARY, is_group
from engine.rundir.pack import PACK, pack_members, unpacked
from engine.rundir.schema import ENDED
from engine.rundir.summary import read_summary

DROPPED_COLUMNS = ("wall_s", "lr", "lr_embed")  # never drawn nor reported: wall time and the set learning rates
MAX_ROWS = 50  # evaluations per member spread over the run: a figure's resolution (a line of 50 points)
GROUP_ROWS = 800  # and about this many in a whole group: a group of more than 16 members keeps fewer each
MIN_ROWS = 10  # but never fewer than this
TAIL_ROWS = 5  # the last evaluations kept as written: `grok report --tail N` for N up to this (the default)
PATH_OPTIONS = ("--out", "-o", "--config", "--csv")  # command-line options whose value is a path on the machine


@dataclass(frozen=True)
class Provenance:
    """Where a kept group's numbers come from: `kept.json`, one per kept directory."""

    group: str  # the source group directory's name (its date and preset)
    preset: str
    command: str  # the sweep's command line, without paths
    created: str  # when the sweep started (group.json)
    kept: str  # when it was kept
    commit: str  # the code that ran it: `grok report --keep` takes the checkout's last commit before `created`
    machine: str  # the machine in words: "2-core CPU (torch cpu)", as given or from the runs' device
    members: int
    ended: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def clean_argv(argv: list[Any]) -> list[str]:
    """A command line without this machine's paths: the program's base name, no path option and its value."""
    out: list[str] = []
    skip = False
    for i, a in enumerate(str(x) for x in argv):
        if skip:
            skip = False
            continue
        if i == 0:  # `python -m grok_tui` records its __main__.py: the command is grok
            out.append("grok" if Path(a).name == "__main__.py" else Path(a).name)
        elif a in PATH_OPTIONS:
            skip = True
        elif a.split("=", 1)[0] in PATH_OPTIONS or a.startswith("/"):
            continue
        else:
            out.append(a)
    return out


def _write_json(path: Path, obj: Any) -> None:
    """Compact JSON (one line): a kept file is read by code, not by eye."""
    text = json.dumps(obj, separators=(",", ":"), default=str) + "\n"
    replace_atomic(path, lambda tmp: tmp.write_text(text))


def _kept_rows(
    header: list[str], rows: list[list[str]], keep_steps: set[float], max_rows: int
) -> tuple[list[int], set[int], set[tuple[int, int]]]:
    """Indices of the rows to keep, of those kept digit for digit, and the cells (row, column) kept digit for
    digit in the other rows: spread over the run (at the figure's resolution), and exactly the first row, the
    last TAIL_ROWS (a report's final values), the rows at `keep_steps` (or the last before each: a fork's
    parent at the fork step, its *before*), and each column's first and largest value (a probe's first
    measurement, `--metrics max:COL`)."""
    n = len(rows)
    exact = {0, *range(max(0, n - TAIL_ROWS), n)}
    steps = [number(r[header.index("step")]) for r in rows]
    for s in keep_steps:
        before = [i for i, x in enumerate(steps) if x <= s]
        if before:
            exact.add(before[-1])
    cells: set[tuple[int, int]] = set()
    for j, col in enumerate(header):
        vals = [number(r[j]) if r[j] else math.nan for r in rows]
        finite = [(v, i) for i, v in enumerate(vals) if math.isfinite(v)]
        if finite and col != "step":
            cells |= {(max(finite)[1], j), (finite[0][1], j)}
    spread = (
        set(range(n)) if n <= max_rows + TAIL_ROWS else {round(i * (n - 1) / (max_rows - 1)) for i in range(max_rows)}
    )
    return sorted(exact | spread | {i for i, _ in cells}), exact, cells


def _drawn(value: str) -> str:
    """A value at a figure's resolution: 4 significant digits (empty and non-numeric cells as written)."""
    try:
        return format(float(value), ".4g") if value else value
    except ValueError:
        return value


EXACT_COLUMNS = ("step", "epoch")  # the x axes: never rounded


def thin_metrics(
    src: Path, dst: Path, keep_steps: set[float], max_rows: int = MAX_ROWS, since: float | None = None
) -> int:
    """Copy metrics.csv thinned (rows and columns; the rows a report reads as written, the others at 4
    significant digits); the rows written. `since`: a fork's step: its rows before it, its parent's copied
    into it at the fork, are the parent's own kept rows, so only the fork's window and the TAIL_ROWS rows
    before it are kept."""
    lines = csv_lines(src / METRICS)
    if not lines:
        return 0
    header, rows = lines[0], lines[1:]
    if since is not None:  # the fork's window and its parent's row at the fork
        first = next((i for i, r in enumerate(rows) if number(r[header.index("step")]) > since), len(rows))
        before = max(1, TAIL_ROWS - (len(rows) - first))
        rows = rows[max(0, first - before) :]
    cols = [j for j, c in enumerate(header) if c not in DROPPED_COLUMNS and any(r[j] for r in rows)]
    if header.index("step") not in cols:
        cols.insert(0, header.index("step"))
    kept, exact, cells = _kept_rows(header, rows, keep_steps, max_rows)
    out = [[header[j] for j in cols]]
    for i in kept:
        whole = i in exact
        out.append(
            [rows[i][j] if whole or (i, j) in cells or header[j] in EXACT_COLUMNS else _drawn(rows[i][j]) for j in cols]
        )
    write_csv_atomic(dst / METRICS, out)
    return len(kept)


def _last_spectrum(src: Path, dst: Path) -> None:
    """fourier.csv's rows at its last step (Fig. 11 draws the last spectrum)."""
    lines = csv_lines(src / FOURIER)
    if len(lines) < 2:
        return
    step = lines[-1][0]
    write_csv_atomic(dst / FOURIER, [lines[0], *(r for r in lines[1:] if r[0] == step)])


def _clean_config(doc: dict[str, Any], fork: bool = False) -> dict[str, Any]:
    """config.json kept small: each group's keys that differ from the defaults (engine/config/overrides.py
    from_dict fills in the rest, as kept.json's commit had them), and argv without machine paths; a fork's
    without its tokens' counts in the training set (no table or figure reads a fork's)."""
    from engine.config import RunConfig

    defaults = RunConfig().to_dict()
    out: dict[str, Any] = {}
    for k, v in doc.items():
        if isinstance(v, dict) and isinstance(defaults.get(k), dict):
            out[k] = {kk: vv for kk, vv in v.items() if _plain(defaults[k].get(kk, None)) != _plain(vv)}
        else:
            out[k] = v
    meta = out.get("_meta")
    if isinstance(meta, dict) and "argv" in meta:
        out["_meta"] = {**meta, "argv": clean_argv(meta["argv"])}
    if fork and isinstance(out.get("_meta"), dict):
        out["_meta"] = {k: v for k, v in out["_meta"].items() if k != "token_freq"}
    return out


def _plain(v: Any) -> Any:
    """A config value as JSON holds it (a tuple is a list), to compare with the default."""
    return list(v) if isinstance(v, tuple) else v


def _clean_summary(doc: dict[str, Any]) -> dict[str, Any]:
    """summary.json kept small: each token's draw share at a figure's resolution (4 significant digits); a
    fork's without its per-token draw shares and training pairs (no table or figure reads a fork's; `grok
    tokens` on the full run does)."""
    if doc.get("fork_step") is not None:
        return {k: v for k, v in doc.items() if k not in ("draw_share", "train_pairs")}
    share = doc.get("draw_share")
    if isinstance(share, list):
        return {**doc, "draw_share": [float(_drawn(str(x))) if isinstance(x, float) else x for x in share]}
    return doc


def _machine(src: Path, runs: list[str]) -> str:
    """The machine in words from the runs' device (summary.json): this one's cores, or "a CUDA GPU"."""
    devices = {str(read_summary(src / r).device or "") for r in runs if r and (src / r / SUMMARY).is_file()}
    return "a CUDA GPU" if any(d.startswith("cuda") for d in devices) else f"{os.cpu_count()}-core CPU"


def _check_destination(s: Path, d: Path) -> None:
    """ConfigError unless `s` is a group and `d` is new, empty, or a kept copy this function made (replaced)."""
    if not is_group(s):
        raise ConfigError(f"{s}: not a sweep group directory (no {GROUP_FILE})")
    if d.resolve() == s.resolve():
        raise ConfigError(f"--keep {d}: is the group itself")
    if (d / KEPT).is_file():
        return
    check_root(d, GROUP, "--keep")  # anywhere else, the destination rule holds (engine/rundir/destination.py)
    if d.exists() and any(d.iterdir()):
        raise ConfigError(f"--keep {d}: exists and is not a kept group ({KEPT} missing); choose another directory")


def keep_group(
    src: str | Path,
    dst: str | Path,
    *,
    commit: str,
    machine: str | None,
    kept: str,
    max_rows: int | None = None,
) -> Provenance:
    """Write the thin copy of group `src` into `dst` (made if missing; an existing kept group is replaced).
    `machine`: the machine in words; None: this one's cores for a group trained on the CPU, "a CUDA GPU" for
    one whose runs trained on one (summary.json `device`). `max_rows`: the evaluations spread over each
    member's run; None: MAX_ROWS, or GROUP_ROWS shared by the
    members that are not forks (at least MIN_ROWS each).

    ConfigError for a source that is not a group or a `dst` that holds something else."""
    s, d = Path(src), Path(dst)
    _check_destination(s, d)
    doc = read_group_doc(s)
    results = read_results(s)
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    by_id = {r.get("member"): r for r in results}
    m_root = unpacked(s) if (s / PACK).is_file() else s  # a kept group kept again: its members unpacked
    members = []
    fork_steps: dict[str, set[float]] = {}  # parent member id -> the steps its forks start from
    for m in doc["members"]:
        run = (by_id.get(m["id"]) or {}).get("run_dir") or m.get("run_dir") or m.get("dir")
        members.append((m, str(run or "")))
    since: dict[str, float] = {}  # fork member id -> its fork step
    for m, run in members:
        if m.get("fork_of") and run and (m_root / run).is_dir():
            at = read_summary(m_root / run).fork_step
            if at is not None:
                fork_steps.setdefault(m["fork_of"], set()).add(float(at))
                since[m["id"]] = float(at)
    if max_rows is None:
        whole = sum(1 for m, _ in members if m["id"] not in since)
        max_rows = max(MIN_ROWS, min(MAX_ROWS, GROUP_ROWS // max(whole, 1)))
    ended = 0
    stage = Path(tempfile.mkdtemp(prefix=".keep-", dir=d))  # the members, packed into PACK
    try:
        packed: list[str] = []
        for m, run in members:
            if not run or not (m_root / run / CONFIG).is_file():
                continue
            out = stage / run
            out.mkdir()
            packed.append(run)
            _write_json(out / CONFIG, _clean_config(read_config_doc(m_root / run), fork=m["id"] in since))
            if (m_root / run / SUMMARY).is_file():
                _write_json(out / SUMMARY, _clean_summary(json_object(m_root / run / SUMMARY)))
            thin_metrics(m_root / run, out, fork_steps.get(m["id"], set()), max_rows, since.get(m["id"]))
            _last_spectrum(m_root / run, out)
            if (m_root / run / JOINS).is_file():
                shutil.copyfile(m_root / run / JOINS, out / JOINS)
            ended += (by_id.get(m["id"]) or {}).get("status") in ENDED
        pack_members(stage, packed, d / PACK)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    if results:
        header = csv_lines(s / RESULTS)[0]
        write_results(d, header, results)
    argv = clean_argv(doc.get("argv") or [])
    _write_json(d / GROUP_FILE, {**doc, "argv": argv})
    prov = Provenance(
        group=s.name,
        preset=str(doc.get("preset", "")),
        command=" ".join(argv),
        created=str(doc.get("created", "")),
        kept=kept,
        commit=commit,
        machine=machine or _machine(m_root, [run for _, run in members]),
        members=len(doc["members"]),
        ended=ended,
    )
    replace_atomic(d / KEPT, lambda tmp: tmp.write_text(json.dumps(prov.to_dict(), indent=2) + "\n"))
    return prov


def read_provenance(kept_dir: str | Path) -> Provenance:
    """A kept group's kept.json; ConfigError naming the file when it is missing or malformed."""
    path = Path(kept_dir) / KEPT
    try:
        doc = json_object(path)
        return Provenance(**{k: doc[k] for k in Provenance.__dataclass_fields__})
    except OSError:
        raise ConfigError(f"{kept_dir}: not a kept group (no {KEPT})") from None
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{path}: malformed ({e})") from None
