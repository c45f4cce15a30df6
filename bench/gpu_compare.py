"""Each member of a (batched) sweep against a solo run of the same config and seed on the same device.

    python bench/gpu_compare.py GROUP_DIR [--atol-acc 0.01] [--rtol-loss 1e-3]

On a GPU, `grok sweep` trains members that share shapes as one batched model (engine/sweep/batched.py);
this reruns every member alone with `engine.run.Run` and compares the metrics rows they share. The
batched and the solo model reduce in a different order, so the curves agree to float tolerance,
not bit for bit; the table says how far apart they are. Exit code 1 when a member is out of tolerance.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

from engine.run import Run
from engine.rundir import read_config, read_metrics
from engine.sweep.spec import Group

ACC = ("train_acc", "val_acc")
LOSS = ("train_loss", "val_loss")


def solo(run_dir: Path, scratch: Path) -> Path:
    """Train the member's own config.json again, alone; returns the new run directory."""
    run = Run(read_config(run_dir), scratch)
    for _ in run.events():
        pass
    return run.dir


def deviation(a: list[dict[str, float]], b: list[dict[str, float]]) -> tuple[float, float, int]:
    """Max |Δ accuracy|, max relative Δ loss over the steps both logged, and how many steps that is."""
    bs = {int(r["step"]): r for r in b}
    d_acc = d_loss = 0.0
    n = 0
    for r in a:
        s = bs.get(int(r["step"]))
        if s is None:
            continue
        n += 1
        for c in ACC:
            d_acc = max(d_acc, abs(r[c] - s[c]))
        for c in LOSS:
            if math.isfinite(r[c]) and math.isfinite(s[c]):
                d_loss = max(d_loss, abs(r[c] - s[c]) / max(abs(s[c]), 1e-12))
    return d_acc, d_loss, n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("group")
    ap.add_argument("--atol-acc", type=float, default=0.01, help="largest |Δ| in train/val accuracy")
    ap.add_argument("--rtol-loss", type=float, default=1e-3, help="largest relative Δ in train/val loss")
    args = ap.parse_args()
    g = Group.open(args.group)
    worst_acc = worst_loss = 0.0
    bad = compared = 0
    with tempfile.TemporaryDirectory(prefix="solo-") as tmp:
        for m in g.members:
            d = g.member_dir(m)
            rows = read_metrics(d) if (d / "metrics.csv").exists() else []
            if not rows:
                print(f"{m.id} {m.label():<24} no metrics: not run")
                bad += 1
                continue
            other = read_metrics(solo(d, Path(tmp)))
            d_acc, d_loss, n = deviation(rows, other)
            ok = d_acc <= args.atol_acc and d_loss <= args.rtol_loss and n == len(rows) == len(other)
            bad += not ok
            compared += 1
            worst_acc, worst_loss = max(worst_acc, d_acc), max(worst_loss, d_loss)
            print(
                f"{m.id} {m.label():<24} {n:>3} evals  max|Δacc| {d_acc:.2e}  max relΔloss {d_loss:.2e}"
                f"  sweep {len(rows)} rows, solo {len(other)}  {'ok' if ok else 'OUT OF TOLERANCE'}"
            )
    verdict = "PASS" if bad == 0 else f"FAIL ({bad} member(s))"
    print(
        f"members {compared}/{len(g.members)} compared: max|Δacc| {worst_acc:.2e} (tol {args.atol_acc:g}), "
        f"max relΔloss {worst_loss:.2e} (tol {args.rtol_loss:g}): {verdict}"
    )
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
