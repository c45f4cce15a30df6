"""Tidy CSV export of one or more run directories; the CLI and the TUI both call `export_runs`."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from engine.config import ConfigError
from engine.rundir import read_config, read_csv

RUN_COLUMNS = ("run", "preset", "seed")


def _run_meta(run_dir: Path) -> dict[str, str]:
    cfg = read_config(run_dir)
    return {"run": run_dir.name, "preset": cfg.preset, "seed": str(cfg.train.seed)}


def export_rows(
    run_dirs: Iterable[Path], metrics: list[str] | None = None, tokens: bool = False
) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows: metrics.csv (or tokens.csv) of every run, with run, preset, seed prepended."""
    header: list[str] = list(RUN_COLUMNS)
    rows: list[dict[str, str]] = []
    name = "tokens.csv" if tokens else "metrics.csv"
    for d in run_dirs:
        d = Path(d)
        meta = _run_meta(d)
        data = read_csv(d / name)
        if data:
            cols = list(data[0].keys())
            if metrics and not tokens:
                unknown = [m for m in metrics if m not in cols]
                if unknown:
                    raise ConfigError(f"{d}: unknown metric(s) {', '.join(unknown)}; have {', '.join(cols)}")
                cols = ["step"] + [m for m in metrics if m != "step"]
            for c in cols:
                if c not in header:
                    header.append(c)
            rows.extend({**meta, **{c: r[c] for c in cols}} for r in data)
    return header, rows


def export_runs(
    run_dirs: Iterable[str | Path],
    out: str | Path | IO[str] = "-",
    metrics: list[str] | None = None,
    tokens: bool = False,
) -> int:
    """Write the tidy CSV to a path, or to stdout for "-"; returns the number of rows."""
    header, rows = export_rows([Path(d) for d in run_dirs], metrics, tokens)
    if out == "-":
        fh: IO[str] = sys.stdout
        close = False
    elif isinstance(out, str | Path):
        try:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            fh = open(out, "w", newline="")
        except OSError as e:
            raise ConfigError(f"cannot write {out}: {e.strerror or e}") from None
        close = True
    else:
        fh, close = out, False
    w = csv.DictWriter(fh, fieldnames=header, restval="")
    w.writeheader()
    w.writerows(rows)
    if close:
        fh.close()
    else:
        fh.flush()
    return len(rows)
