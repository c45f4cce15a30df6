"""The TUI's `e`: a figure of the main view (accuracy and loss, phase markers) beside the CSV, with matplotlib."""

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
    from engine.rundir import read_csv
    from grok_tui.figures.draw import draw, save
    from grok_tui.figures.panels import run_panel

    d = Path(run_dir)
    rows = read_csv(d / "metrics.csv")
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
