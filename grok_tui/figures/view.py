"""The TUI's `e`: a figure of the view on screen, with matplotlib: the main view (accuracy and loss, phase
markers) beside the run's CSV, or the compare view (its runs and groups, its column) in the runs folder."""

from __future__ import annotations

from pathlib import Path

VIEW_PANELS = (["train_acc", "val_acc"], ["train_loss", "val_loss"])


def has_matplotlib() -> bool:
    from importlib.util import find_spec

    try:
        return find_spec("matplotlib") is not None
    except ValueError:  # sys.modules["matplotlib"] is None
        return False


def export_view_figure(run_dir: str | Path, log_x: bool = True) -> Path | None:
    """`<run_dir>.png` beside the run directory (where `e` writes `<run_dir>.csv`); None without matplotlib.

    The panels are the main view's accuracy and loss charts on its step axis (log or linear).
    ConfigError when the run has no rows yet.
    """
    if not has_matplotlib():
        return None
    from engine.config import ConfigError
    from engine.records.run import read_run
    from grok_tui.figures.draw import draw, save
    from grok_tui.figures.panels import run_panel

    d = Path(run_dir)
    rows = read_run(d).rows
    if not rows:
        raise ConfigError(f"{d}: no metrics rows yet")
    panels = []
    for metrics, title in zip(VIEW_PANELS, ("accuracy", "loss"), strict=True):
        have = [m for m in metrics if m in rows[0]]
        if have:
            p = run_panel([d], have, "step")
            p.title = f"{p.title}: {title}"
            panels.append(p)
    return save(draw(panels, log_x=log_x), d.parent / f"{d.name}.png")


def export_compare_figure(paths: list[str], column: str, out_dir: str | Path, log_x: bool = True) -> Path | None:
    """The compare view as a figure: `<out_dir>/compare-<time>-<column>.png`; None without matplotlib.

    The runs share one panel, each group gets its own (mean and spread per cell), as `grok figure
    RUN... GROUP... -m COLUMN` draws them. ConfigError when nothing is selected or a run lacks the column.
    """
    if not has_matplotlib():
        return None
    import time

    from engine.config import ConfigError
    from engine.rundir import clean_text
    from grok_tui.figures.draw import draw, save
    from grok_tui.figures.panels import panels_for

    if not paths:
        raise ConfigError("compare: select a run or a group first")
    safe = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in clean_text(column))
    target = Path(out_dir) / f"compare-{time.strftime('%Y%m%d-%H%M%S')}-{safe}.png"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"{target.parent}: cannot create: {e.strerror or e}") from None
    return save(draw(panels_for(paths, [column]), log_x=log_x), target)
