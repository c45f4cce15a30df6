"""A run's outcome as one frozen record, RunSummary: what RunFinished carries and summary.json holds, each
field checked in one place (below the events, which carry it, and the run directory, which writes and reads it).

`RunLog` (engine/rundir/writer.py) writes `RunSummary.written(fields).doc()`; every reader (engine/records/run.py,
a sweep's results rows, `grok ls`/`show`) gets engine/rundir/summary.py `read_summary`'s RunSummary. A field
summary.json lacks (a run from an older engine, or one still going) reads as None; a key this engine does not
know (a newer engine's) is kept in `extra`, unchecked. A present field must be what the engine writes, or the
record is refused: ValueError naming the field, which the reader turns into `FILE: FIELD: ...`.

To add a field, add one line to `RunSummary` with its check (engine/checks.py); `results=True` also makes
it a results.csv column (engine/records/results.py), in the order written here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.checks import (
    FRACTION,
    LEARNED_STEPS,
    NUMBER,
    NUMBERS,
    OBJECTS,
    SECONDS,
    STEP,
    STEPS,
    TEXT,
    WHOLE,
    WHOLES,
    Check,
    or_null,
    shown,
)
from engine.status import Status

# Every status a run's summary.json can hold: "running" and "paused" while a writer holds the run
# (engine/train/run.py), the rest once it ended (RunFinished) or a fork was prepared (engine/events.py).
STATUSES = tuple(Status.written())
STATUS: Check = ((lambda v: v in STATUSES), "one of " + ", ".join(STATUSES))


def _field(check: Check, *, results: bool = False) -> Any:
    return field(default=None, metadata={"check": check, "results": results})


def _invalid(f: dataclasses.Field[Any], v: Any) -> str | None:
    """`FIELD: must be ..., found ...` when `v` fails the field's check, else None."""
    ok, want = f.metadata["check"]
    return None if ok(v) else f"{f.name}: must be {want}, found {shown(v)}"


@dataclass(frozen=True)
class RunSummary:
    """summary.json's fields; None where the file lacks one."""

    # results.csv's columns, in this order (engine/records/results.py): the outcome a report compares
    status: str | None = _field(STATUS, results=True)  # STATUSES
    steps: int | None = _field(STEP, results=True)  # steps taken
    max_steps: int | None = _field(STEPS, results=True)  # the budget (a results row sets it)
    memorized_step: int | None = _field(or_null(STEP), results=True)  # engine/train/phases.py
    generalized_step: int | None = _field(or_null(STEP), results=True)
    grokking_delay: int | None = _field(or_null(WHOLE), results=True)  # generalized - memorized
    final_train_acc: float | None = _field(or_null(FRACTION), results=True)
    final_val_acc: float | None = _field(or_null(FRACTION), results=True)
    best_val_acc: float | None = _field(or_null(FRACTION), results=True)
    wall_s: float | None = _field(SECONDS, results=True)
    # the run
    steps_per_s: float | None = _field(SECONDS)
    device: str | None = _field(TEXT)
    preset: str | None = _field(TEXT)
    seed: int | None = _field(WHOLE)
    error: str | None = _field(or_null(TEXT))  # why a failed run failed
    early_stop_step: int | None = _field(or_null(STEP))  # where train.patience's rule first held
    circuit_step: int | None = _field(or_null(STEP))  # the progress probe's phases (engine/train/phases.py)
    cleanup_step: int | None = _field(or_null(STEP))
    c_clamped: int | None = _field(STEP)  # evaluations where adaptive c hit its clamp (engine/train/adaptive.py)
    cuda_graph: str | None = _field(TEXT)  # on a GPU: "on", or why the step is not recorded
    batched: int | None = _field(STEPS)  # members trained together (engine/sweep/batched.py)
    # the split's tokens (engine/events.py TokenSets, engine/train/evaluation.py split_facts)
    coverage: float | None = _field(or_null(FRACTION))  # the val_acc a model blind to absent tokens can reach
    rare_tokens: list[int] | None = _field(WHOLES)
    absent_tokens: list[int] | None = _field(WHOLES)
    target_tokens: list[int] | None = _field(WHOLES)
    train_pairs: list[int] | None = _field(WHOLES)  # per operand token, a pair (t, t) once
    rare_k: int | None = _field(STEP)
    target_pairs: list[int] | None = _field(WHOLES)
    target_rate: float | None = _field(or_null(NUMBER))  # the resolved train.target_rate
    draw_share: list[float] | None = _field(NUMBERS)  # NaN for a token never drawn (engine/task/samplers.py)
    target_draw_ratio: float | None = _field(or_null(NUMBER))
    target_shared_pairs: int | None = _field(STEP)  # training pairs holding two targets (engine/task/data.py)
    target_batch_share: float | None = _field(FRACTION)  # share of steps whose batch held a target (eq. 4's p_i)
    learned_acc: float | None = _field(FRACTION)  # the threshold of `learned_step` (engine/rundir/columns.py)
    learned_step: list[int | None] | None = _field(LEARNED_STEPS)  # per operand token; None: not learned
    # a fork's lineage (engine/train/fork.py, docs/FORK.md): its parent's directory (relative to the fork's own
    # parent directory), the step it was forked at, every run above it and each change made at a fork
    parent: str | None = _field(TEXT)
    fork_step: int | None = _field(STEP)
    ancestors: list[dict[str, Any]] | None = _field(OBJECTS)
    interventions: list[dict[str, Any]] | None = _field(OBJECTS)
    optimizer_state: str | None = _field(TEXT)  # what the fork did with the optimizer's state
    # the frequency tail's outcome (train.sampler = tail), by decile of tail rank, the most drawn first
    # (engine/train/evaluation.py): each decile's val accuracy at the last evaluation (NaN: no val pair) and
    # its realized share of draws
    decile_val_acc: list[float] | None = _field(NUMBERS)
    decile_draw_share: list[float] | None = _field(NUMBERS)
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys this engine does not know, as read

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name != "extra" and v is not None and (why := _invalid(f, v)):
                raise ValueError(why)

    @classmethod
    def of(cls, fields: Mapping[str, Any]) -> RunSummary:
        """From a summary's fields (summary.json's object, or the engine's dict through `written`); unknown
        keys go to `extra`. ValueError naming the first known field that fails its check: a null is one
        only where its check allows null."""
        known = {f.name: f for f in dataclasses.fields(cls) if f.name != "extra"}
        for k, v in fields.items():
            if k in known and (why := _invalid(known[k], v)):
                raise ValueError(why)
        return cls(
            **{k: v for k, v in fields.items() if k in known}, extra={k: v for k, v in fields.items() if k not in known}
        )

    @classmethod
    def written(cls, fields: Mapping[str, Any]) -> RunSummary:
        """The engine's summary fields as summary.json holds them: a non-finite number is unknown (JSON has
        no NaN), so it is left out (null where its field allows null)."""
        return cls.of({k: v for k, v in fields.items() if not (isinstance(v, float) and not math.isfinite(v))})

    def doc(self) -> dict[str, Any]:
        """summary.json's object: every field that is set, and null for an unset one whose check allows null
        (a phase not reached yet), then `extra`."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name != "extra" and (v is not None or f.metadata["check"][0](None)):
                out[f.name] = v
        return {**out, **self.extra}

    def fields(self) -> dict[str, Any]:
        """The fields that are set (not None), then `extra`: what a face lists."""
        return {k: v for k, v in self.doc().items() if v is not None}
