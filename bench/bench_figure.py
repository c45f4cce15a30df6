"""Time to draw and save the figure of a 40-member sweep group (the size of fig4_token_skew), as `grok figure` does.

    .venv/bin/python bench/bench_figure.py [--evals 51] [--repeat 3]

The group is written to a temporary directory: 8 arms × 5 seeds, each member's metrics.csv with
train_acc, val_acc and val_acc_rare at 51 evaluations (10,000 steps every 200). It is drawn
with the default metrics (train_acc, val_acc: two panels, 8 bands each, 95% bootstrap intervals
at every evaluation) and saved as PNG, SVG and PDF. The target (issue 25): under 5 s. The first
repeat includes importing matplotlib; the last lines time the whole command in a fresh process
(interpreter start, imports, drawing, saving), wall clock and the process's CPU time.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.config import RunConfig
from engine.sweep.spec import Group, expand, parse_sweep

ARMS, SEEDS = 8, 5


def write_group(root: Path, evals: int) -> Path:
    spec = parse_sweep({"seeds": SEEDS, "arms": {f"a{i}": {"optim.lr_ratio": 1.0 + i} for i in range(ARMS)}})
    base = RunConfig(preset="bench")
    g = Group.create(root, "bench", base, spec, [m for m, _ in expand(base, spec)])
    for m in g.members:
        d = g.member_dir(m)
        d.mkdir()
        (d / "config.json").write_text(json.dumps(g.config(m).to_dict()))
        with open(d / "metrics.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["step", "epoch", "train_acc", "val_acc", "val_acc_rare"])
            for i in range(evals):
                s = 200 * i
                t = 1 / (1 + math.exp(-(s - 1000 * (1 + m.seed % 3)) / 300))
                v = 1 / (1 + math.exp(-(s - 3000 - 400 * int(m.arm[1:]) - 100 * m.seed) / 500))
                w.writerow([s, s / 10, t, v, v * 0.8])
        g.record({"member": m.id, "status": "finished", "steps": 200 * (evals - 1), "run_dir": d.name})
    return g.dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=51)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gdir = write_group(Path(tmp), args.evals)
        from grok_tui.figures.draw import draw, save
        from grok_tui.figures.panels import panels_for

        for r in range(args.repeat):
            for fmt in ("png", "svg", "pdf"):
                t0 = time.perf_counter()
                panels = panels_for([str(gdir)], ["train_acc", "val_acc"])
                t1 = time.perf_counter()
                fig = draw(panels)
                save(fig, Path(tmp) / f"f.{fmt}")
                t2 = time.perf_counter()
                size = (Path(tmp) / f"f.{fmt}").stat().st_size
                print(
                    f"repeat {r} {fmt}: {t2 - t0:.2f} s in all (read + bootstrap {t1 - t0:.2f} s, "
                    f"draw + save {t2 - t1:.2f} s), {size / 1024:.0f} KiB"
                )
        for r in range(args.repeat):
            t0 = time.perf_counter()
            cpu0 = _child_cpu()
            cmd = [sys.executable, "-m", "grok_tui", "figure", str(gdir), "-o", str(Path(tmp) / "cli.png")]
            subprocess.run(cmd, check=True, capture_output=True)
            wall, cpu = time.perf_counter() - t0, _child_cpu() - cpu0
            print(f"repeat {r} `grok figure GROUP -o f.png`, the whole command: {wall:.2f} s wall, {cpu:.2f} s CPU")


def _child_cpu() -> float:
    """User + system seconds of the finished child processes: the command's own work on a shared, loaded machine."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


if __name__ == "__main__":
    main()
