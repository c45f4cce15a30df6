"""CPU cost of `grok run`'s progress line per StepsTaken event (one every 10 training steps).

Each progress class handles 20,000 StepsTaken events in-process; the figure is CPU microseconds per
event. RichProgress also redraws from its own thread 4 times a second, which this does not count.
Run it on a terminal for the rich line as a user sees it, e.g. `script -qc "python
bench/bench_progress_line.py" /dev/null`.
"""

from __future__ import annotations

import sys
import time

from engine.config import RunConfig
from engine.events import RunStarted, StepsTaken
from grok_tui.progress import PlainProgress, RichProgress

N = 20_000


def main() -> None:
    started = RunStarted(
        config=RunConfig(preset="bench"),
        device="cpu",
        n_train=1,
        n_test=1,
        vocab_size=3,
        token_freq=(1,),
        step=0,
        max_steps=10 * N,
        columns=("step",),
    )
    for cls in (PlainProgress, RichProgress):
        progress = cls()
        progress.handle(started)
        t = time.process_time()
        for i in range(N):
            progress.handle(StepsTaken(10 * i, 0, 1.0, 400.0))
        took = time.process_time() - t
        progress.close()
        print(f"{cls.__name__}: {took / N * 1e6:.1f} CPU µs per StepsTaken", file=sys.stderr)


if __name__ == "__main__":
    main()
