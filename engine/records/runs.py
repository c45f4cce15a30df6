"""Every run under a root directory, one row each: its config and its summary, as wandb's `api.runs` lists a
project's runs. A notebook's `open_runs(ROOT)` (docs/API.md); each row is the run's RunRecord."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from engine.config import ConfigError
from engine.records.frames import data_frame
from engine.records.run import RunRecord, read_run
from engine.rundir import is_run_dir

SEARCH_DEPTH = 4  # ROOT/<study>/<group>/<member>: a sweep's members are runs too


class RunTable(list[RunRecord]):
    """The runs found under a root, by path; `errors` holds one line for each run directory that could not
    be read (the rest are still listed)."""

    def __init__(self, runs: list[RunRecord], errors: list[str]) -> None:
        super().__init__(runs)
        self.errors = errors

    def rows(self) -> list[dict[str, Any]]:
        """One dict per run: `path`, `status`, `step`, every config key (dotted, `optim.lr`) and every
        summary field that is set."""
        out = []
        for r in self:
            config = {
                f"{group}.{k}": v
                for group, fields in r.config.to_dict().items()
                if isinstance(fields, dict)
                for k, v in fields.items()
            }
            out.append({"path": str(r.path), "status": r.status, "step": r.step, **config, **_summary(r)})
        return out

    def to_pandas(self) -> Any:
        """`rows()` as a pandas DataFrame, one row per run (pandas: the optional extra)."""
        rows = self.rows()
        keys = list(dict.fromkeys(k for r in rows for k in r))
        return data_frame({k: [r.get(k) for r in rows] for k in keys})


def _summary(r: RunRecord) -> dict[str, Any]:
    s = r.summary
    fields = {f.name: getattr(s, f.name) for f in dataclasses.fields(s) if f.name not in ("extra", "status", "steps")}
    return {k: v for k, v in fields.items() if v is not None}


def read_runs(root: str | Path, depth: int = SEARCH_DEPTH) -> RunTable:
    """Every run directory in `root` and its folders down to `depth` levels (a run's own folders are not
    searched), read without taking any lock; ConfigError when `root` is not a directory."""
    top = Path(root)
    if not top.is_dir():
        raise ConfigError(f"{top}: not a directory")
    runs: list[RunRecord] = []
    errors: list[str] = []

    def walk(d: Path, left: int) -> None:
        try:
            children = sorted(p for p in d.iterdir() if p.is_dir())
        except OSError as e:
            errors.append(f"{d}: cannot list: {e.strerror or e}")
            return
        for p in children:
            if is_run_dir(p):
                try:
                    runs.append(read_run(p))
                except ConfigError as e:
                    errors.append(str(e))
            elif left > 1:
                walk(p, left - 1)

    if is_run_dir(top):
        return RunTable([read_run(top)], [])
    walk(top, depth)
    return RunTable(runs, errors)
