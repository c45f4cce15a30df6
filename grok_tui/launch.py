"""The app's command line checked before any screen opens: what to train, open, resume or compare."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.config import RunConfig
from grok_tui import runner
from grok_tui.options import RunOptions
from grok_tui.rundata import RunData


@dataclass
class Launch:
    """What the app starts with."""

    cfg: RunConfig | None
    out: Path
    opened: RunData | None = None  # a run directory shown with --open
    resume: runner.RunFactory | None = None  # the first run continues a run directory (--resume)
    overrides: dict[str, Any] = field(default_factory=dict)


def resolve(
    opts: RunOptions, open_dir: str | None = None, compare: list[str] | None = None, resume_dir: str | None = None
) -> Launch:
    """The app's start for a command line: the run options, and a run to open, runs to compare or a run to
    resume; raises ConfigError for bad options."""
    from engine.config import ConfigError
    from grok_tui.rundata import load_run

    out: str | Path = opts.out_root
    overrides = opts.overrides()
    cfg, opened, resume = None, None, None
    if open_dir and resume_dir:
        raise ConfigError("--open shows a run, --resume continues one: pass one of them")
    if open_dir:
        if opts.given("preset", "config"):
            raise ConfigError("--open shows a finished run; drop --preset/--config")
        opened = load_run(open_dir)
        cfg = opened.config  # the run's config, as its record read it (engine/records/run.py)
        out = Path(open_dir).parent
    elif resume_dir:
        opts.check_resume()
        cfg, resume = runner.resume_factory(resume_dir, opts.steps, opts.device)
        out = Path(resume_dir).parent
    elif opts.given("preset", "config"):
        cfg = opts.resolve()
    from engine.records.run import read_run
    from engine.rundir import is_group, is_run_dir

    for d in compare or []:
        if is_group(d):  # a sweep: one mean curve and band per arm × grid cell
            from engine.records.group import read_group

            read_group(d)  # an unreadable group.json is a one-line error now, not in the screen
        elif not is_run_dir(d):
            raise ConfigError(f"{d}: not a run directory (no config.json) or sweep group directory (no group.json)")
        else:
            read_run(d)  # a run this version cannot read (e.g. rows wider than its header) is one line now
    return Launch(cfg, Path(out), opened, resume, overrides)
