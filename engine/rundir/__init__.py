"""The run directory: the only code that reads or writes a run's or a group's files, and the names the
rest of the engine and the faces import from it (`from engine.rundir import read_config`).

Each concept is one module: the files' names and the resume table (files.py), durable writes (atomic.py),
where a run, group or paper directory is made and read (dirs.py), what may be written where
(destination.py), the lock (lock.py), the CSV logs (csvlog.py, columns.py), the writer (writer.py),
summary.json (summary.py), the probes' logs (probe_logs.py), checkpoints saved, loaded and kept
(checkpoints.py), a fork's lineage (lineage.py), a kept group (keep.py, pack.py), the JSON schemas
(schema.py) and the cleaning of text for a terminal (safetext.py).

A name is loaded from its module when first used (PEP 562's module `__getattr__`), so a face that needs one
predicate loads one module. A run's RunSummary and the events that carry it are below this package
(engine/summary.py, engine/events.py): the writer and the checkpoints import them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.rundir.atomic import unique_dir, write_json_atomic
    from engine.rundir.checkpoints import (
        Keeper,
        Kept,
        checkpoint_at,
        list_kept,
        load_checkpoint,
        load_state,
        save_checkpoint,
    )
    from engine.rundir.columns import (
        BASE_COLUMNS,
        LEARNED_ACC,
        PROGRESS_COLUMNS,
        RARE_COLUMNS,
        held_since,
        learned_step,
    )
    from engine.rundir.csvlog import (
        CLOSED,
        csv_header,
        csv_lines,
        log_fault,
        number,
        read_csv,
        read_metrics,
        torn,
        truncate_csv,
        truncate_logs,
    )
    from engine.rundir.destination import check_file, check_root, owner
    from engine.rundir.dirs import (
        RunDirError,
        empty_run_dir,
        link_run,
        new_paper_dir,
        new_run_dir,
        read_config,
        read_config_doc,
        read_group_doc,
        read_paper_doc,
        read_results,
        short_name,
        write_paper_doc,
        write_results,
    )
    from engine.rundir.files import (
        CHECKPOINT,
        CONFIG,
        FOURIER,
        GROUP_FILE,
        JOINS,
        KEPT,
        KEYFREQ,
        METRICS,
        RESULTS,
        RING,
        SUMMARY,
        TOKENS,
        is_group,
        is_paper_dir,
        is_run_dir,
        mtime,
    )
    from engine.rundir.keep import TAIL_ROWS, Provenance, clean_argv, keep_group, read_provenance
    from engine.rundir.lineage import copy_logs, fork_marks, read_interventions, recolumn, write_interventions
    from engine.rundir.lock import RunInUse, RunLock, lock_holder
    from engine.rundir.pack import PACK, pack_members, unpacked
    from engine.rundir.probe_logs import join_steps, read_circuit, read_fourier, read_learned_steps, read_tokens
    from engine.rundir.safetext import clean_block, clean_text
    from engine.rundir.schema import ENDED, PAPER_FORMAT
    from engine.rundir.summary import RESULTS_FIELDS, read_summary, write_summary
    from engine.rundir.writer import RunLog, RunWriteError, versions, write_error

# The facade's names, each with the module that defines it (tests/engine/test_rundir_facade.py checks that
# these, the imports above and `__all__` name the same things).
# fmt: off
_PARTS: dict[str, tuple[str, ...]] = {
    "atomic": ("unique_dir", "write_json_atomic"),
    "checkpoints": ("Keeper", "Kept", "checkpoint_at", "list_kept", "load_checkpoint", "load_state", "save_checkpoint"),
    "columns": ("BASE_COLUMNS", "LEARNED_ACC", "PROGRESS_COLUMNS", "RARE_COLUMNS", "held_since", "learned_step"),
    "csvlog": (
        "CLOSED", "csv_header", "csv_lines", "log_fault", "number", "read_csv", "read_metrics", "torn",
        "truncate_csv", "truncate_logs",
    ),
    "destination": ("check_file", "check_root", "owner"),
    "dirs": (
        "RunDirError", "empty_run_dir", "link_run", "new_paper_dir", "new_run_dir", "read_config", "read_config_doc",
        "read_group_doc", "read_paper_doc", "read_results", "short_name", "write_paper_doc", "write_results",
    ),
    "files": (
        "CHECKPOINT", "CONFIG", "FOURIER", "GROUP_FILE", "JOINS", "KEPT", "KEYFREQ", "METRICS", "RESULTS", "RING",
        "SUMMARY", "TOKENS", "is_group", "is_paper_dir", "is_run_dir", "mtime",
    ),
    "keep": ("Provenance", "TAIL_ROWS", "clean_argv", "keep_group", "read_provenance"),
    "lineage": ("copy_logs", "fork_marks", "read_interventions", "recolumn", "write_interventions"),
    # lineage.lineage is imported from its module: `engine.rundir.lineage` names the module
    "lock": ("RunInUse", "RunLock", "lock_holder"),
    "pack": ("PACK", "pack_members", "unpacked"),
    "probe_logs": ("join_steps", "read_circuit", "read_fourier", "read_learned_steps", "read_tokens"),
    "safetext": ("clean_block", "clean_text"),
    "schema": ("ENDED", "PAPER_FORMAT"),
    "summary": ("RESULTS_FIELDS", "read_summary", "write_summary"),
    "writer": ("RunLog", "RunWriteError", "versions", "write_error"),
}
__all__ = [
    "BASE_COLUMNS", "CHECKPOINT", "CLOSED", "CONFIG", "ENDED", "FOURIER", "GROUP_FILE", "JOINS", "KEPT", "KEYFREQ",
    "LEARNED_ACC", "METRICS", "PACK", "PAPER_FORMAT", "PROGRESS_COLUMNS", "RARE_COLUMNS", "RESULTS", "RESULTS_FIELDS",
    "RING", "SUMMARY", "TAIL_ROWS", "TOKENS", "Keeper", "Kept", "Provenance", "RunDirError", "RunInUse", "RunLock",
    "RunLog", "RunWriteError", "check_file", "check_root", "checkpoint_at", "clean_argv",
    "clean_block", "clean_text", "copy_logs", "csv_header", "csv_lines", "empty_run_dir", "fork_marks", "held_since",
    "is_group", "is_paper_dir", "is_run_dir", "join_steps", "keep_group", "learned_step", "link_run", "list_kept",
    "load_checkpoint", "load_state", "lock_holder", "log_fault", "mtime", "new_paper_dir", "new_run_dir", "number",
    "owner", "pack_members", "read_circuit", "read_config", "read_config_doc", "read_csv", "read_fourier",
    "read_group_doc", "read_interventions", "read_learned_steps", "read_metrics", "read_paper_doc", "read_provenance",
    "read_results", "read_summary", "read_tokens", "recolumn", "save_checkpoint", "short_name", "torn",
    "truncate_csv", "truncate_logs", "unique_dir", "unpacked", "versions", "write_error", "write_interventions",
    "write_json_atomic", "write_paper_doc", "write_results", "write_summary",
]
# fmt: on
_HOME = {name: part for part, names in _PARTS.items() for name in names}


def __getattr__(name: str) -> object:
    part = _HOME.get(name)
    if part is None:  # a submodule (`from engine.rundir import files`) is imported as usual
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{part}"), name)
    globals()[name] = value  # the next access does not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
