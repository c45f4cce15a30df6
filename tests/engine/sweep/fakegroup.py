"""A sweep group written by hand: group.json, results.csv and each member's config.json and metrics.csv.

Report and figure tests read it back; the curves are chosen by the test, so every statistic has an
exact expected value.
"""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.records.group import GroupRecord, read_group
from engine.records.group_dir import Group, Member
from engine.rundir import owner
from engine.sweep.spec import expand, parse_sweep
from tests.conftest import tiny_config

Curve = Callable[[Member], dict[str, list[float]]]  # member -> {column: values at each eval}


def fake_group(
    tmp_path: Path,
    table: dict[str, Any],
    curve: Curve,
    steps: list[int],
    status: str = "finished",
    preset: str = "fake",
    max_steps: int | None = None,
    summary: Callable[[Member], dict[str, Any]] | None = None,
    **base_over: object,
) -> Group:
    """A finished group: `table` is the [sweep] table; `curve(member)` gives each member's metrics, and
    `summary(member)` more of its summary.json's fields (the tail's deciles)."""
    spec = parse_sweep(table)
    base = tiny_config(**base_over)
    if base.train.max_steps < steps[-1]:  # no log runs past its config's budget (docs/ENGINE.md, the guarantees)
        base = tiny_config(**{**base_over, "train__max_steps": max_steps or steps[-1]})
    # a reader's test may put a group where no command makes one (inside a run or a group,
    # engine/rundir/destination.py): made in a directory of its own, then moved there
    inside = owner(tmp_path) is not None
    root = Path(tempfile.mkdtemp()) if inside else tmp_path
    g = Group.create(root, preset, base, spec, [m for m, _ in expand(base, spec)])
    for m in g.members:
        d = g.member_dir(m)
        d.mkdir()
        (d / "config.json").write_text(json.dumps(g.config(m).to_dict()))
        cols = curve(m)
        with open(d / "metrics.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["step", "epoch", *cols])
            for i, s in enumerate(steps):
                w.writerow([s, s / 10, *(cols[c][i] for c in cols)])
        doc = {"status": status, "steps": steps[-1], "memorized_step": steps[0], "generalized_step": None}
        (d / "summary.json").write_text(json.dumps(doc | (summary(m) if summary else {})))
        g.record({"member": m.id, **doc, "max_steps": max_steps or steps[-1], "run_dir": d.name})
    if inside:
        shutil.move(g.dir, tmp_path / g.dir.name)
        shutil.rmtree(root)
        return Group.open(tmp_path / g.dir.name)
    return Group.open(g.dir)


def fake_record(tmp_path: Path, *args: Any, **kw: Any) -> GroupRecord:
    """`fake_group`, read back as the faces read a group (engine/records/group.py)."""
    return read_group(fake_group(tmp_path, *args, **kw).dir)
