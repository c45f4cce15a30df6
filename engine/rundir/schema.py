"""What a reader of a run or group directory accepts: every field of config.json, group.json and paper.json
that a face or a report uses, checked for type and range on read (summary.json's fields are RunSummary's,
engine/summary.py, checked with the same checks, engine/checks.py).

A field that is missing is left to the reader's default (older runs lack some); one that is present
must be what the engine writes, or the read fails with a ConfigError `FILE: FIELD: what is wrong`.
Keys no reader uses are not checked, so a newer engine's additions still read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.checks import (
    FRACTION,
    OBJECT,
    OBJECTS,
    SECONDS,
    STEP,
    STEPS,
    STRINGS,
    TEXT,
    WHOLE,
    WHOLES,
    Check,
    list_of,
    or_null,
    shown,
)
from engine.config import ConfigError
from engine.status import PaperStatus, Status

# The statuses of a run that ended by its own rule (Status.ended).
ENDED = tuple(s for s in Status if s.ended)
PREPARED = Status.PREPARED  # a fork written and not yet trained (`grok fork --prepare`, engine/train/fork.py)

NAME: Check = (
    (lambda v: TEXT[0](v) and v not in ("", ".", "..") and "/" not in v and "\\" not in v),
    "a directory name",
)

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
    "sweep.seeds": list_of(WHOLE[0], "a list of whole numbers"),
    "swept": STRINGS,
    "members": OBJECTS,
}
MEMBER: dict[str, Check] = {
    "id": ((lambda v: TEXT[0](v) and v != ""), "a non-empty string"),
    "arm": TEXT,
    "seed": WHOLE,
    "values": OBJECT,
    "overrides": OBJECT,
    "dir": NAME,  # joined to the group directory: never a path that leaves it
    "run_dir": ((lambda v: v == "" or NAME[0](v)), "a directory name or empty"),
}
MEMBER_REQUIRED = ("id", "arm", "seed", "values", "overrides")


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
    "preset": ((lambda v: TEXT[0](v) and v != ""), "a non-empty string"),
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
