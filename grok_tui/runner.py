"""The engine side of the TUI: build a Run and fold its events into a RunData, in one worker thread."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.config import RunConfig
from engine.events import RunStarted
from engine.train.run import RunHandle
from grok_tui.rundata import RunData, history

RunFactory = Callable[[RunConfig, str | Path], RunHandle]  # an engine.train.run.Run, or a test's stand-in


def make_run(cfg: RunConfig, out: str | Path) -> RunHandle:
    """The real engine; torch is imported here, inside the worker thread, so the UI opens at once."""
    from engine.train.run import Run

    return Run(cfg, out)


def resume_factory(run_dir: str | Path, max_steps: int | None, device: str | None) -> tuple[RunConfig, RunFactory]:
    """`--resume RUN_DIR`: the run's own config, and a factory that continues it from its checkpoint.

    The checks `grok run --resume` makes (a finished run needs --steps, the checkpoint must load)
    run here, before any screen opens, so a bad directory is one `error:` line.
    """
    from engine.train.run import Run

    run = Run.from_checkpoint(run_dir, max_steps=max_steps, device=device)

    def factory(_cfg: RunConfig, _out: str | Path) -> RunHandle:
        return run

    return run.cfg, factory


def consume(
    factory: RunFactory,
    cfg: RunConfig,
    out: str | Path,
    data: RunData,
    cancelled: Callable[[], bool],
    on_run: Callable[[RunHandle], None],
) -> None:
    """Iterate the run's events into `data` until it ends or the worker is cancelled.

    On cancel the generator is closed, which makes Run close its log with status `interrupted`.
    Any exception (building the run, or inside the engine) marks `data` failed; it never escapes.
    """
    from engine.config import ConfigError

    try:
        run = factory(cfg, out)
    except ConfigError as e:  # e.g. --device cuda on a machine without CUDA: a user error
        data.fail(str(e))
        return
    except Exception as e:  # noqa: BLE001 - shown in the app, which stays usable
        data.fail(f"{type(e).__name__}: {e}")
        return
    on_run(run)
    events = run.events()
    try:
        for ev in events:
            data.apply(ev)
            if isinstance(ev, RunStarted) and ev.step > 0 and ev.run_dir:  # a resume or a fork: its history
                data.preload(*history(ev.run_dir, ev.step))
            if cancelled():
                break
    except Exception as e:  # noqa: BLE001
        data.fail(f"{type(e).__name__}: {e}")
    finally:
        events.close()
