"""`grok run`: the headless run, for SSH sessions, tmux and batch jobs."""

from __future__ import annotations

import signal
import sys
from typing import Annotated, Any

import typer

from grok_tui import options as o
from grok_tui.errors import EXIT_DIVERGED, fail, user_errors

STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def format_summary(summary: dict[str, Any]) -> str:
    keys = (
        "status",
        "steps",
        "wall_s",
        "steps_per_s",
        "memorized_step",
        "generalized_step",
        "grokking_delay",
        "final_train_acc",
        "final_val_acc",
        "best_val_acc",
    )
    parts = []
    for k in keys:
        v = summary.get(k)
        if isinstance(v, float):
            v = f"{v:.4g}"
        parts.append(f"  {k:<17} {v if v is not None else '-'}")
    return "\n".join(parts)


def _say(line: str) -> None:
    try:
        print(line, flush=True)
    except OSError:
        pass


def execute(run: Any, quiet: bool, log_every: int) -> int:
    """Iterate a Run to its end with progress and signal handling; return the exit code."""
    from grok_tui.progress import make_progress

    caught: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        caught.append(signum)
        run.stop("interrupted")

    old = {}
    for name in STOP_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None:
            old[sig] = signal.signal(sig, on_signal)
    progress = make_progress(quiet, log_every)
    try:
        for ev in run.events():
            progress.handle(ev)
    finally:
        progress.close()
        for sig, h in old.items():
            signal.signal(sig, h)
    status = run.status
    _say(f"run directory: {run.dir}")
    _say(format_summary(run.summary))
    if status == "interrupted":
        return 128 + (caught[0] if caught else signal.SIGINT)
    if status == "diverged":
        print(f"error: loss became NaN/inf at step {run.summary.get('steps')}; run diverged", file=sys.stderr)
        return EXIT_DIVERGED
    if status == "failed":
        print(f"error: run failed: {run.summary.get('error', '')} (see {run.dir}/error.txt)", file=sys.stderr)
        return 1
    return 0


def register(app: typer.Typer) -> None:
    @app.command()
    @user_errors
    def run(
        preset: o.Preset = None,
        config: o.ConfigFile = None,
        set_: o.Set = None,
        seed: o.Seed = None,
        steps: o.Steps = None,
        device: o.Device = None,
        out: o.Out = "runs",
        resume: Annotated[str | None, typer.Option("--resume", help="Continue RUN_DIR from its checkpoint.")] = None,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
        log_every: Annotated[int, typer.Option("--log-every", help="Evaluations between plain log lines.")] = 10,
    ) -> None:
        """Train one run headless and write its run directory."""
        from engine.config import parse_set
        from engine.presets import resolve_config

        if resume:
            if preset or config or set_ or seed is not None:
                fail("--resume continues a run with its own config; drop --preset/--config/--set/--seed")
            from engine.run import Run

            r = Run.resume(resume, max_steps=steps, device=device)
        else:
            cfg, _ = resolve_config(preset, config, parse_set(set_ or []), seed=seed, steps=steps, device=device)
            from engine.run import Run

            r = Run(cfg, out)
        raise typer.Exit(execute(r, quiet, log_every))
