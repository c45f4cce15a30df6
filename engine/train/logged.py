"""The metrics.csv columns a config's run will log, from the config alone, and the check of every setting that
names one: a setting naming a column the run does not log is refused before anything is written or trained."""

from __future__ import annotations

from typing import Any

from engine.config import ConfigError, RunConfig


def metrics_columns(cfg: RunConfig) -> list[str]:
    """metrics.csv's columns for `cfg`, as its Trainer logs them, from the config alone: the probes are built
    over the model on torch's meta device (engine/train/footprint.py) with an empty training set, so nothing is
    loaded, drawn or allocated and torch's thread settings stay as they are."""
    import torch

    from engine.probes import ProbeSet
    from engine.probes.base import ProbeContext
    from engine.rundir import BASE_COLUMNS
    from engine.train.footprint import meta_model

    empty = torch.zeros((0, cfg.data.seq_len), dtype=torch.long)
    ctx = ProbeContext.of_model(cfg, meta_model(cfg), _no_loss, empty, empty[:, 0], lambda: False)
    return [*BASE_COLUMNS, *ProbeSet(ctx).columns()]


def check_columns(cfg: RunConfig) -> None:
    """ConfigError unless each setting that names a metrics.csv column names one `cfg`'s run logs: train.stop_metric,
    whatever train.patience is (config.json keeps the name, and a fork or a resume with patience on reads it)."""
    import difflib

    from engine.rundir import BASE_COLUMNS

    name = cfg.train.stop_metric
    if name in BASE_COLUMNS:
        return  # no probe to build: a sweep's parent checks its members without importing torch
    cols = metrics_columns(cfg)
    if name not in cols:
        close = difflib.get_close_matches(name, cols, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f" (its columns: {', '.join(cols[3:])})"
        raise ConfigError(f"train.stop_metric: {name!r} is not a column this run logs{hint}")


def _no_loss(*args: Any) -> Any:
    raise AssertionError("metrics_columns builds probes to read their columns, never to measure")
