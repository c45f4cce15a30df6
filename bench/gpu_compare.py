"""Each member of a (batched) sweep against a solo run of the same config and seed on the same device.

    python bench/gpu_compare.py GROUP_DIR [--early 10] [--rtol-loss 1e-4] [--no-outcomes]

On a GPU, `grok sweep` trains members that share shapes as one batched model (engine/sweep/batched.py).
The batched and the solo model reduce in a different order, so they part at float rounding (about
1e-7 relative), and training amplifies that: on adamlr_mul (lr 1e-3, c = 10) a member and its solo
run are 8e-7 apart in train loss at step 50, 2.5e-4 at step 100 and 0.2 at step 200 on the CPU
(bench/gpu_divergence.py measures it, on any device and in float64 too); on fig6_optimizers some
members pass 1e-4 by step 50 (one likely route: Adam's m/√v turns a rounding-sized gradient into
a full-size step). A whole-run comparison row by row therefore cannot pass, bug or no bug. This check has two parts:

1. **Early, pass/fail**: every batch the sweep forms (`plan`, members in its order) is trained again as one model for
   `--early` steps, evaluated at every step, beside each member alone; every row must agree within
   `--rtol-loss` in loss and `--atol-acc` in accuracy. A wrong lr, split, seed, c or weight decay in
   the batched path shows from the first step on, at 1e-3 and more; rounding is near 1e-7 there.
2. **Outcomes, reported**: each member's own sweep rows against a whole solo rerun: steps to 95%
   val accuracy and the final val accuracy, paired over members (mean difference and its bootstrap
   95% interval, engine/sweep/stats.py). Batched and solo runs are two draws of the rounding; the
   interval says whether batching moves the outcome, not whether the curves coincide.

Exit code 1 when the early check fails.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

from engine.config import RunConfig, apply_overrides
from engine.events import EvalLogged
from engine.rundir.dirs import read_config, read_metrics
from engine.sweep.batched import plan
from engine.sweep.member import MemberSpec
from engine.sweep.spec import Group
from engine.sweep.stats import paired
from engine.train.many import train_many
from engine.train.run import Run
from engine.train.trainer import Trainer

Rows = dict[int, dict[str, float]]


def early_rows(cfgs: list[RunConfig]) -> tuple[list[Rows], list[Rows]]:
    """(batched, solo) evaluation rows of each config of one batch."""
    many: list[Rows] = [{} for _ in cfgs]
    for i, ev in train_many(cfgs):
        if isinstance(ev, EvalLogged):
            many[i][ev.step] = ev.row
    solo = [{ev.step: ev.row for ev in Trainer(c) if isinstance(ev, EvalLogged)} for c in cfgs]
    return many, solo


def gap(a: Rows, b: Rows) -> tuple[float, float, bool]:
    """Max relative Δ loss, max |Δ accuracy|, and whether the rows' steps match."""
    d_loss = d_acc = 0.0
    for s in set(a) & set(b):
        for c in ("train_loss", "val_loss"):
            d_loss = max(d_loss, abs(a[s][c] - b[s][c]) / max(abs(b[s][c]), 1e-12))
        for c in ("train_acc", "val_acc"):
            d_acc = max(d_acc, abs(a[s][c] - b[s][c]))
    return d_loss, d_acc, set(a) == set(b)


def grokked(rows: list[dict[str, float]], level: float = 0.95) -> float:
    """First logged step with val accuracy >= level; the last step + 1 when none."""
    hit = next((r["step"] for r in rows if r["val_acc"] >= level), None)
    return float(hit) if hit is not None else float(rows[-1]["step"] + 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("group")
    ap.add_argument("--early", type=int, default=10, help="steps of the tight, pass/fail comparison")
    ap.add_argument("--rtol-loss", type=float, default=1e-4, help="largest relative Δ loss in the early rows")
    ap.add_argument("--atol-acc", type=float, default=1e-3, help="largest |Δ accuracy| in the early rows")
    ap.add_argument("--no-outcomes", action="store_true", help="skip the whole solo reruns")
    args = ap.parse_args()
    g = Group.open(args.group)
    dirs = [g.member_dir(m) for m in g.members]
    cfgs = [read_config(d) for d in dirs]
    short = [
        apply_overrides(c, {"train.max_steps": args.early, "train.eval_every": 1, "train.patience": 0}) for c in cfgs
    ]
    bad = 0
    worst_loss = worst_acc = 0.0
    # The batches the sweep itself forms, in its order (engine/sweep/batched.py `plan`): a member it
    # trains alone runs the solo code path, and there is nothing to compare.
    specs = [MemberSpec(m.id, c, str(d)) for m, c, d in zip(g.members, short, dirs, strict=True)]
    index = {s.id: i for i, s in enumerate(specs)}
    compared = 0
    for batch in plan(specs):
        if len(batch) == 1:
            print(f"early {batch[0].id} alone: the sweep trains it as a solo run, nothing to compare")
            continue
        many, solo = early_rows([s.config for s in batch])
        for spec, a, s in zip(batch, many, solo, strict=True):
            i = index[spec.id]
            d_loss, d_acc, same = gap(a, s)
            ok = same and d_loss <= args.rtol_loss and d_acc <= args.atol_acc
            bad += not ok
            compared += 1
            worst_loss, worst_acc = max(worst_loss, d_loss), max(worst_acc, d_acc)
            print(
                f"early {g.members[i].id} {g.members[i].label():<28} batch of {len(batch):>2}  "
                f"max relΔloss {d_loss:.1e}  max|Δacc| {d_acc:.1e}  {'ok' if ok else 'OUT OF TOLERANCE'}"
            )
    print(
        f"early check, {compared} of {len(cfgs)} members batched, over {args.early} steps: "
        f"max relΔloss {worst_loss:.1e} (tol {args.rtol_loss:g}), max |Δacc| {worst_acc:.1e} (tol {args.atol_acc:g}): "
        + ("nothing batched" if compared == 0 else "PASS" if bad == 0 else f"FAIL ({bad} member(s))")
    )
    if args.no_outcomes:
        return 0 if bad == 0 else 1
    sweep_g, solo_g, sweep_f, solo_f = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="solo-") as tmp:
        for d, c in zip(dirs, cfgs, strict=True):
            rows = read_metrics(d) if (d / "metrics.csv").exists() else []
            if not rows:
                continue
            run = Run(dataclasses.replace(c), Path(tmp))
            for _ in run.events():
                pass
            other = read_metrics(run.dir)
            sweep_g.append(grokked(rows))
            solo_g.append(grokked(other))
            sweep_f.append(rows[-1]["val_acc"])
            solo_f.append(other[-1]["val_acc"])
    if not sweep_g:
        print("outcomes: no member has metrics")
        return 1
    pg, pf = paired(sweep_g, solo_g), paired(sweep_f, solo_f)
    same = sum(a == b for a, b in zip(sweep_g, solo_g, strict=True))
    print(
        f"outcomes, {pg['n']} members, sweep minus solo: steps to 95% val {pg['diff_mean']:+.0f} "
        f"[{pg['lo']:+.0f}, {pg['hi']:+.0f}] (equal in {same}), final val acc {pf['diff_mean']:+.3f} "
        f"[{pf['lo']:+.3f}, {pf['hi']:+.3f}]"
    )
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
