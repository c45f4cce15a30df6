"""The record of a whole-paper run: paper.json in the directory `grok sweep --preset paper` makes.

Each sweep of engine/paper.PAPER_SWEEPS gets a group directory inside the paper directory and an
entry with its status (pending, running, ended, interrupted) and its segments: one per process that
worked on it, with its wall seconds, the CPU seconds of the sweep process and of its workers, the
commit, the cores and the workers. `grok sweep --resume PAPER_DIR` adds segments until every sweep
ended; `figures` turns the record into the wall time and the share of the cores kept busy.

The workers' CPU time is `getrusage(RUSAGE_CHILDREN)`, which counts a child once it has been waited
for: the local pool's `ProcessPoolExecutor.shutdown(wait=True)` joins every worker before a group's
sweep returns, so a segment's delta holds them. Ray's workers are not children: a ray segment counts
the sweep process only, and `figures` says so.
"""

from __future__ import annotations

import calendar
import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.config import ConfigError
from engine.rundir import PAPER_FORMAT, new_paper_dir, read_paper_doc, read_results, versions, write_paper_doc
from engine.status import PaperStatus, Status

ROOT = Path(__file__).resolve().parents[2]  # the source tree (engine/records/paper.py sits two below it)


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def source_commit() -> str:
    """`git rev-parse HEAD` of this source tree (`+dirty` with uncommitted changes to tracked files),
    else the installed package's version."""
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=30
        )
        lines = top.stdout.split()
        ok = top.returncode == 0 and len(lines) == 2 and Path(lines[0]).resolve() == ROOT
        if ok and re.fullmatch(r"[0-9a-f]{40}", lines[1]):
            diff = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT, capture_output=True, timeout=60)
            return lines[1] + ("+dirty" if diff.returncode == 1 else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "grok-tui " + versions().get("grok-tui", "unknown")


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


class Meter:
    """Wall and CPU seconds from its creation: this process's own, and its children's once reaped."""

    def __init__(self) -> None:
        self.start = utc_now()
        self._t0 = time.monotonic()
        self._self0 = _cpu(resource.RUSAGE_SELF)
        self._children0 = _cpu(resource.RUSAGE_CHILDREN)

    def read(self) -> dict[str, Any]:
        """The segment's end, wall_s, cpu_s and its two parts."""
        import multiprocessing

        multiprocessing.active_children()  # waits for any child that exited but was not joined yet
        own = _cpu(resource.RUSAGE_SELF) - self._self0
        workers = _cpu(resource.RUSAGE_CHILDREN) - self._children0
        return {
            "end": utc_now(),
            "wall_s": round(time.monotonic() - self._t0, 3),
            "cpu_s": round(own + workers, 3),
            "cpu_self_s": round(own, 3),
            "cpu_workers_s": round(workers, 3),
        }


@dataclass(frozen=True)
class PaperSweep:
    """One sweep of the record: its preset, claim, group directory (a name inside the paper directory) and status."""

    preset: str
    claim: str
    group: str
    status: PaperStatus
    segments: tuple[dict[str, Any], ...]


class Paper:
    """A paper directory: paper.json and one group directory per sweep started."""

    def __init__(self, path: Path, doc: dict[str, Any]) -> None:
        self.dir = path
        self.doc = doc

    @classmethod
    def create(cls, out: str | Path, sweeps: tuple[tuple[str, str], ...], options: dict[str, Any]) -> Paper:
        """Make <out>/<stamp>-paper/ with every sweep pending; `options` (sets, seeds, steps, device)
        are what each group is made with, now or by a later --resume."""
        path = new_paper_dir(Path(out))
        doc = {
            "format": PAPER_FORMAT,
            "version": 1,
            "created": utc_now(),
            "argv": sys.argv,
            "options": options,
            "sweeps": [
                {"preset": name, "claim": claim, "group": "", "status": PaperStatus.PENDING, "segments": []}
                for name, claim in sweeps
            ],
        }
        write_paper_doc(path, doc)
        return cls(path, doc)

    @classmethod
    def open(cls, path: str | Path) -> Paper:
        """Read a paper directory back; ConfigError naming the file if paper.json is missing or not one."""
        p = Path(path)
        return cls(p, read_paper_doc(p))

    @property
    def sweeps(self) -> list[PaperSweep]:
        return [
            PaperSweep(s["preset"], str(s.get("claim", "")), s["group"], PaperStatus(s["status"]), tuple(s["segments"]))
            for s in self.doc["sweeps"]
        ]

    @property
    def options(self) -> dict[str, Any]:
        """The options every group of the paper is made with (`grok sweep --set/--seeds/--steps/--device`)."""
        return {"sets": [], "seeds": None, "steps": None, "device": None, **self.doc["options"]}

    def set_group(self, i: int, group_dir: Path) -> None:
        self.doc["sweeps"][i]["group"] = group_dir.name
        write_paper_doc(self.dir, self.doc)

    def begin(self, i: int, workers: int, backend: str, commit: str) -> Meter:
        """Mark sweep `i` running and open its segment (written at once, so a killed process leaves its start)."""
        meter = Meter()
        seg = {
            "start": meter.start,
            **dict.fromkeys(("end", "wall_s", "cpu_s", "cpu_self_s", "cpu_workers_s")),  # written by `end`
            "cores": os.cpu_count() or 1,
            "workers": workers,
            "backend": backend,
            "commit": commit,
            "exit": None,
        }
        entry = self.doc["sweeps"][i]
        entry["status"] = PaperStatus.RUNNING
        entry["segments"].append(seg)
        write_paper_doc(self.dir, self.doc)
        return meter

    def end(self, i: int, meter: Meter, status: PaperStatus, exit_code: int | None) -> dict[str, Any]:
        """Close sweep `i`'s open segment with the meter's times; `status` is ended or interrupted."""
        entry = self.doc["sweeps"][i]
        seg = entry["segments"][-1]
        seg.update(meter.read(), exit=exit_code)
        entry["status"] = status
        write_paper_doc(self.dir, self.doc)
        return dict(seg)


# --- the figures: wall time, CPU time and the share of the cores kept busy ------------------------


@dataclass(frozen=True)
class SweepFigures:
    """A sweep's segments summed: wall and CPU seconds, core-seconds available, segments without an end."""

    preset: str
    status: PaperStatus
    group: str
    segments: int
    wall_s: float
    cpu_s: float
    core_s: float  # Σ wall_s × cores: what the machine could have given
    unended: int  # segments whose process was killed before it wrote their end: not counted
    ray: bool  # a segment ran on ray: its workers' CPU time is not in cpu_s

    @property
    def busy(self) -> float | None:
        return busy_share(self.cpu_s, self.core_s)


def busy_share(cpu_s: float, core_s: float) -> float | None:
    """The share of the cores kept busy: CPU s / (wall s × cores), `core_s` being Σ wall s × cores."""
    return cpu_s / core_s if core_s > 0 else None


def segment_text(seg: dict[str, Any]) -> str:
    """`0.8 min, 19 CPU s, 20% of 2 cores busy`: one closed segment of the record."""
    busy = busy_share(float(seg["cpu_s"]), float(seg["wall_s"]) * int(seg["cores"]))
    share = f"{busy:.0%}" if busy is not None else "-"
    return f"{_span(float(seg['wall_s']))}, {float(seg['cpu_s']):,.0f} CPU s, {share} of {seg['cores']} cores busy"


def sweep_figures(s: PaperSweep) -> SweepFigures:
    ended = [g for g in s.segments if g.get("end") is not None and g.get("wall_s") is not None]
    return SweepFigures(
        s.preset,
        s.status,
        s.group,
        len(s.segments),
        sum(float(g["wall_s"]) for g in ended),
        sum(float(g["cpu_s"] or 0.0) for g in ended),
        sum(float(g["wall_s"]) * int(g["cores"]) for g in ended),
        len(s.segments) - len(ended),
        any(g.get("backend") == "ray" for g in s.segments),
    )


def _parse_utc(text: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.2f} h"


def _has_failed(group_dir: Path) -> bool:
    """A member of the group is recorded failed in its results.csv (an unreadable one says nothing here)."""
    try:
        return any(r.get("status") == Status.FAILED for r in read_results(group_dir))
    except ConfigError:
        return False


def render(paper: Paper, running: bool = False) -> str:
    """The record as text: per sweep its wall time, CPU seconds and busy share; then the totals.

    `running`: a process holds the paper directory now, so a segment without an end is still going
    (otherwise its process was killed)."""
    rows = [sweep_figures(s) for s in paper.sweeps]
    lines = [f"paper {paper.dir}", f"{'sweep':<24} {'status':<12} {'segm.':>5} {'wall':>10} {'CPU s':>9} {'busy':>6}"]
    for r in rows:
        busy = f"{r.busy:.0%}" if r.busy is not None else "-"
        wall_text = _span(r.wall_s) if r.segments else "-"
        cpu_text = f"{r.cpu_s:,.0f}" if r.segments else "-"
        status = r.status if r.status != PaperStatus.RUNNING or running else PaperStatus.KILLED
        lines.append(f"{r.preset:<24} {status:<12} {r.segments:>5} {wall_text:>10} {cpu_text:>9} {busy:>6}")
    wall = sum(r.wall_s for r in rows)
    cpu = sum(r.cpu_s for r in rows)
    core_s = sum(r.core_s for r in rows)
    n_seg = sum(r.segments - r.unended for r in rows)
    ended = sum(r.status == PaperStatus.ENDED for r in rows)
    segs = [g for s in paper.sweeps for g in s.segments if g.get("end") is not None]
    starts = [t for g in segs if (t := _parse_utc(str(g["start"]))) is not None]
    ends = [t for g in segs if (t := _parse_utc(str(g["end"]))) is not None]
    lines.append(
        f"total: {ended} of {len(rows)} sweeps ended; real wall time {_span(wall)}, the sum of {n_seg} segment(s)"
    )
    if starts and ends:
        gaps = max(max(ends) - min(starts) - wall, 0.0)
        lines.append(
            f"  first start to last end {_span(max(ends) - min(starts))}: the {_span(gaps)} between segments "
            "(the paper not running) is excluded"
        )
    if core_s > 0:
        cores = sorted({int(g["cores"]) for g in segs})
        lines.append(
            f"  cores kept busy: {cpu:,.0f} CPU s / {core_s:,.0f} core-s (wall × {'/'.join(map(str, cores))} cores) "
            f"= {busy_share(cpu, core_s):.0%}"
        )
    commits = sorted({str(g.get("commit", "")) for s in paper.sweeps for g in s.segments})
    if commits:
        lines.append(f"  commit{'s' if len(commits) > 1 else ''}: {', '.join(commits)}")
    live = running and any(r.status == PaperStatus.RUNNING for r in rows)  # its open segment is still going
    unended = sum(r.unended for r in rows) - (1 if live else 0)
    if unended > 0:
        lines.append(f"  {unended} segment(s) have no end (their process was killed): not counted")
    if any(r.ray for r in rows):
        lines.append("  ray segments count the sweep process's CPU only (ray workers are not its children)")
    for s in paper.sweeps:  # the paper's resume skips an ended sweep; its failed members wait for the group's
        if s.status == PaperStatus.ENDED and s.group and _has_failed(paper.dir / s.group):
            lines.append(
                f"  {s.preset} ended with failed members: `grok sweep --resume {paper.dir / s.group}` runs them again"
            )
    return "\n".join(lines) + "\n"
