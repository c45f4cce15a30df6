"""What a reader of a run or group directory accepts: the checks of summary.json's fields (engine/rundir/summary.py
RunSummary), and every field of config.json, group.json and paper.json that a face or a report uses,
checked for type and range on read.

A field that is missing is left to the reader's default (older runs lack some); one that is present
must be what the engine writes, or the read fails with a ConfigError `FILE: FIELD: what is wrong`.
Keys no reader uses are not checked, so a newer engine's additions still read.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.config import ConfigError
from engine.status import PaperStatus, Status

# Every status a run's summary.json can hold: "running" and "paused" while a writer holds the run
# (engine/train/run.py), the rest once it ended (RunFinished) or a fork was prepared (engine/events.py).
STATUSES = tuple(Status.written())
# The statuses of a run that ended by its own rule (Status.ended).
ENDED = tuple(s for s in Status if s.ended)
PREPARED = Status.PREPARED  # a fork written and not yet trained (`grok fork --prepare`, engine/train/fork.py)

Check = tuple[Callable[[Any], bool], str]  # a test of the value, and what it must be


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _text(v: Any) -> bool:
    return isinstance(v, str)


def _step(v: Any) -> bool:
    return _whole(v) and v >= 0


def or_null(check: Check) -> Check:
    return (lambda v: v is None or check[0](v)), f"{check[1]} or null"


def list_of(ok: Callable[[Any], bool], want: str) -> Check:
    return (lambda v: isinstance(v, list) and all(ok(x) for x in v)), want


STEP: Check = (_step, "a whole number ≥ 0")
STEPS: Check = ((lambda v: _whole(v) and v >= 1), "a whole number ≥ 1")
WHOLE: Check = (_whole, "a whole number")
SECONDS: Check = ((lambda v: _number(v) and v >= 0), "a number ≥ 0")
FRACTION: Check = ((lambda v: _number(v) and 0 <= v <= 1), "a number in [0, 1]")
TEXT: Check = (_text, "a string")
OBJECT: Check = ((lambda v: isinstance(v, dict)), "an object")
WHOLES = list_of(_step, "a list of whole numbers ≥ 0")
NUMBER: Check = (_number, "a finite number")
# NaN allowed: draw_share's token never drawn (engine/task/samplers.py)
NUMBERS = list_of(lambda x: isinstance(x, int | float) and not isinstance(x, bool), "a list of numbers")
STATUS: Check = ((lambda v: v in STATUSES), "one of " + ", ".join(STATUSES))
LEARNED_STEPS = list_of(lambda t: t is None or _step(t), "a list of whole numbers ≥ 0 or nulls")
STRINGS = list_of(_text, "a list of strings")
OBJECTS = list_of(lambda x: isinstance(x, dict), "a list of objects")
NAME: Check = ((lambda v: _text(v) and v not in ("", ".", "..") and "/" not in v and "\\" not in v), "a directory name")

# config.json: checked before engine/records/run.py builds its RunConfig with engine.config.from_dict (which checks
# the rest), so a bad value the faces show is named as this file's field.
CONFIG: dict[str, Check] = {
    "preset": TEXT,
    "description": TEXT,
    "train": OBJECT,
    "train.max_steps": STEPS,
    "train.seed": WHOLE,
    "train.patience": STEP,
    "train.target_val_acc": FRACTION,
    "_meta": OBJECT,
    "_meta.created": TEXT,
    "_meta.device": TEXT,
    "_meta.n_train": STEP,
    "_meta.n_test": STEP,
    "_meta.token_freq": WHOLES,
}

GROUP: dict[str, Check] = {
    "preset": TEXT,
    "description": TEXT,
    "created": TEXT,
    "base": OBJECT,
    "sweep": OBJECT,
    "sweep.seeds": list_of(_whole, "a list of whole numbers"),
    "swept": STRINGS,
    "members": OBJECTS,
}
MEMBER: dict[str, Check] = {
    "id": ((lambda v: _text(v) and v != ""), "a non-empty string"),
    "arm": TEXT,
    "seed": WHOLE,
    "values": OBJECT,
    "overrides": OBJECT,
    "dir": NAME,  # joined to the group directory: never a path that leaves it
    "run_dir": ((lambda v: v == "" or NAME[0](v)), "a directory name or empty"),
}
MEMBER_REQUIRED = ("id", "arm", "seed", "values", "overrides")


def shown(v: Any) -> str:
    """The offending value, short and with any control character escaped (repr does)."""
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _lookup(doc: dict[str, Any], key: str) -> tuple[bool, Any]:
    """(present, value) of a dotted key; absent when a parent is missing or not an object."""
    node: Any = doc
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def check_fields(path: Path, doc: dict[str, Any], fields: dict[str, Check], where: str = "") -> None:
    """ConfigError `path: [where]key: must be ..., found ...` for the first present field that fails."""
    for key, (ok, want) in fields.items():
        present, v = _lookup(doc, key)
        if present and not ok(v):
            raise ConfigError(f"{path}: {where}{key}: must be {want}, found {shown(v)}")


def check_config(path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    check_fields(path, doc, CONFIG)
    return doc


def check_entry(
    path: Path, doc: dict[str, Any], required: tuple[str, ...], fields: dict[str, Check], where: str = ""
) -> None:
    """The `required` keys present, then the `fields` checked: a group's, a member's, a paper's, a segment's."""
    for key in required:
        if key not in doc:
            raise ConfigError(f"{path}: {where}{key}: missing")
    check_fields(path, doc, fields, where)


def check_group(path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    """group.json: its fields, then each member's; `base` is checked by from_dict when the group opens."""
    check_entry(path, doc, ("base", "sweep", "members"), GROUP)
    ids: set[str] = set()
    for i, m in enumerate(doc["members"]):
        check_entry(path, m, MEMBER_REQUIRED, MEMBER, f"members[{i}].")
        if m["id"] in ids:
            raise ConfigError(f"{path}: members[{i}].id: {shown(m['id'])} appears twice")
        ids.add(m["id"])
    return doc


# paper.json: the record of a whole-paper run (engine/records/paper.py). `format` tells it from any
# other JSON file; every sweep entry and every segment is checked as group.json's members are.
PAPER_FORMAT = "grok-tui paper"
PAPER_STATUSES = PaperStatus.written()
PAPER: dict[str, Check] = {
    "version": ((lambda v: v == 1), "1"),
    "created": TEXT,
    "options": OBJECT,
    "options.sets": STRINGS,
    "options.seeds": or_null(STEPS),
    "options.steps": or_null(STEPS),
    "options.device": or_null(TEXT),
    "sweeps": OBJECTS,
}
PAPER_SWEEP: dict[str, Check] = {
    "preset": ((lambda v: _text(v) and v != ""), "a non-empty string"),
    "claim": TEXT,
    "group": ((lambda v: v == "" or NAME[0](v)), "a directory name or empty"),
    "status": ((lambda v: v in PAPER_STATUSES), "one of " + ", ".join(PAPER_STATUSES)),
    "segments": OBJECTS,
}
PAPER_SWEEP_REQUIRED = ("preset", "group", "status", "segments")
SEGMENT: dict[str, Check] = {
    "start": TEXT,
    "end": or_null(TEXT),
    "wall_s": or_null(SECONDS),
    "cpu_s": or_null(SECONDS),
    "cpu_self_s": or_null(SECONDS),
    "cpu_workers_s": or_null(SECONDS),
    "cores": STEPS,
    "workers": STEP,
    "backend": TEXT,
    "commit": TEXT,
    "exit": or_null(WHOLE),
}
SEGMENT_REQUIRED = ("start", "end", "wall_s", "cpu_s", "cores")


def check_paper(path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    """paper.json: its format mark, its fields, each sweep's and each segment's."""
    if doc.get("format") != PAPER_FORMAT:
        raise ConfigError(f"{path}: not a grok-tui paper record (format: {shown(doc.get('format'))})")
    check_entry(path, doc, ("version", "options", "sweeps"), PAPER)
    groups: set[str] = set()
    for i, s in enumerate(doc["sweeps"]):
        where = f"sweeps[{i}]."
        check_entry(path, s, PAPER_SWEEP_REQUIRED, PAPER_SWEEP, where)
        if s["group"] and s["group"] in groups:
            raise ConfigError(f"{path}: {where}group: {shown(s['group'])} appears twice")
        groups.add(s["group"])
        for j, seg in enumerate(s["segments"]):
            check_entry(path, seg, SEGMENT_REQUIRED, SEGMENT, f"{where}segments[{j}].")
    return doc
