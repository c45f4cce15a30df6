"""GPU agreement: batched members against solo runs, where two runs part, TF32 against fp32, the paper's verdicts.

    python bench/gpu_agree.py compare GROUP_DIR [--early 10] [--rtol-loss 1e-4] [--no-outcomes]
    python bench/gpu_agree.py divergence [--device cuda] [--preset adamlr_mul] [--steps 1000] [--every 20]
    python bench/gpu_agree.py tf32 OFF_GROUP_DIR ON_GROUP_DIR
    python bench/gpu_agree.py verdicts PAPER_DIR > verdicts.txt      # one line per comparison
    python bench/gpu_agree.py verdicts --compare CPU.txt GPU.txt      # the same comparisons, verdict by verdict

`compare`: each member of a (batched) sweep against a solo run of the same config and seed on the same
device. On a GPU, `grok sweep` trains members that share shapes as one batched model
(engine/sweep/batched.py). The batched and the solo model reduce in a different order, so they part at
float rounding (about 1e-7 relative), and training amplifies that: on adamlr_mul (lr 1e-3, c = 10) a
member and its solo run are 8e-7 apart in train loss at step 50, 2.5e-4 at step 100 and 0.2 at step 200
on the CPU (`divergence` measures it, on any device and in float64 too); on fig6_optimizers some members
pass 1e-4 by step 50 (one likely route: Adam's m/√v turns a rounding-sized gradient into a full-size
step). A whole-run comparison row by row therefore cannot pass, bug or no bug. So two parts:

1. **Early, pass/fail**: every batch the sweep forms (`plan`, members in its order) is trained again as
   one model for `--early` steps, evaluated at every step, beside each member alone; every row must agree
   within `--rtol-loss` in loss and `--atol-acc` in accuracy. A wrong lr, split, seed, c or weight decay
   in the batched path shows from the first step on, at 1e-3 and more; rounding is near 1e-7 there.
2. **Outcomes, reported**: each member's own sweep rows against a whole solo rerun: steps to 95% val
   accuracy and the final val accuracy, paired over members (the mean difference with its spread over
   members by the report's rule, engine/records/stats.py seed_interval). Batched and solo runs are two
   draws of the rounding; the spread says whether batching moves the outcome, not whether the curves
   coincide. Exit code 1 when the early check fails.

`divergence`: where a batched member and its solo run part on one device, float rounding amplified or a
bug. Trains one config (seed 0) several ways and compares the evaluation rows step by step: solo against
solo (is one run reproducible on this device at all: atomics in the embedding's backward, cuBLAS's split-K
choices?), solo against solo under `torch.use_deterministic_algorithms(True)`, and member 0 of a batched
model of N seeds (engine/train/many.py) against solo. Each line gives the relative loss difference and
|Δ val acc| at a few steps, and the first step at which the loss difference passes 1e-6, 1e-4 and 1e-2.
Rounding that the training dynamics amplify shows as a difference that starts near 1e-7 and grows step by
step (fastest through the grokking jump); a bug shows as a large difference from the first evaluations on.

`tf32`: TF32's effect on steps to 95% val accuracy, one sweep run twice (train.tf32 off and on), paired by
member. Each member (same config and seed in both groups) gives one pair of `generalized_step` values
(from results.csv); pairs where both runs reached 95% are compared with the report's paired statistics
(engine/records/stats.py: mean difference on − off with its spread over members, the sign-test and Wilcoxon
p), and the members that reached 95% in only one arm are counted. The last line, `tf32 steps to 95%`, is
what bench/gpu_check.sh puts in its table.

`verdicts`: each claim's verdicts in a paper directory, as words a CPU run and a GPU run can be compared
by. For every sweep of the paper (paper.json) the comparison lines of `grok report GROUP` (arm ratios of
steps to 95% val, then the paired differences by seed, engine/records/paired.py) are reduced to a
verdict: a paired difference or ratio whose interval lies on one side of 0 (or 1) is `below` or `above`,
one that spans it `spans`; an arm ratio without an interval is `faster`, `slower` or `equal`; a line about
unreached seeds says so. Each line is `preset <TAB> verdict <TAB> template <TAB> the report's line`, the
template being the line with its measured numbers replaced by # (settings such as weight_decay=0.01
kept): what `--compare` matches CPU and GPU lines by. Compare verdicts, not digits: the GPU's rounding
parts seeds.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from engine.config import ConfigError, RunConfig, apply_overrides
from engine.config.presets import load_preset
from engine.events import EvalLogged
from engine.records.group import read_group
from engine.records.paired import spread
from engine.records.stats import paired, seed_interval
from engine.rundir import read_config, read_metrics
from engine.sweep.batched import plan
from engine.sweep.member import MemberSpec
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


def compare_main(argv: list[str]) -> int:
    """`compare`: see the module's docstring."""
    ap = argparse.ArgumentParser(
        prog="bench/gpu_agree.py compare",
        description="Each member of a (batched) sweep against a solo run of the same config and seed.",
    )
    ap.add_argument("group")
    ap.add_argument("--early", type=int, default=10, help="steps of the tight, pass/fail comparison")
    ap.add_argument("--rtol-loss", type=float, default=1e-4, help="largest relative Δ loss in the early rows")
    ap.add_argument("--atol-acc", type=float, default=1e-3, help="largest |Δ accuracy| in the early rows")
    ap.add_argument("--no-outcomes", action="store_true", help="skip the whole solo reruns")
    args = ap.parse_args(argv)
    g = read_group(args.group).group
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
    dg = seed_interval([a - b for a, b in zip(sweep_g, solo_g, strict=True)])
    df = seed_interval([a - b for a, b in zip(sweep_f, solo_f, strict=True)])
    same = sum(a == b for a, b in zip(sweep_g, solo_g, strict=True))
    print(
        f"outcomes, {dg.n} members, sweep minus solo: steps to 95% val {spread(dg, '+.0f')} (equal in {same}), "
        f"final val acc {spread(df, '+.3f')}"
    )
    return 0 if bad == 0 else 1


def solo(cfg: RunConfig) -> Rows:
    """One run alone: its evaluation rows by step."""
    return {ev.step: ev.row for ev in Trainer(cfg) if isinstance(ev, EvalLogged)}


def member0(cfgs: list[RunConfig]) -> Rows:
    """Member 0 of the batched model: its evaluation rows by step."""
    return {ev.step: ev.row for i, ev in train_many(cfgs) if i == 0 and isinstance(ev, EvalLogged)}


def parting(name: str, a: Rows, b: Rows, marks: tuple[int, ...]) -> None:
    """Print the relative train-loss gap at the marked steps and where it first passes each level."""
    steps = sorted(set(a) & set(b))
    rel = {s: abs(a[s]["train_loss"] - b[s]["train_loss"]) / max(abs(b[s]["train_loss"]), 1e-12) for s in steps}
    acc = max((abs(a[s]["val_acc"] - b[s]["val_acc"]) for s in steps), default=0.0)
    first = []
    for level in (1e-6, 1e-4, 1e-2):
        hit = next((s for s in steps if rel[s] > level), None)
        first.append(f">{level:g}@{hit if hit is not None else '-'}")
    at = "  ".join(f"{s}:{rel[s]:.1e}" for s in marks if s in rel)
    print(f"{name:<34} rows {len(a)}/{len(b)}  max|Δval_acc| {acc:.3f}  {' '.join(first)}  relΔloss {at}")


def divergence_main(argv: list[str]) -> None:
    """`divergence`: see the module's docstring."""
    ap = argparse.ArgumentParser(
        prog="bench/gpu_agree.py divergence", description="Where a batched member and its solo run part on one device."
    )
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--preset", default="adamlr_mul")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--every", type=int, default=20)
    ap.add_argument("--members", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="skip the deterministic-algorithms pair")
    ap.add_argument("--dtype", default="float32", help="float64 moves a rounding-born divergence later")
    args = ap.parse_args(argv)
    base = load_preset(args.preset).config
    over = {
        "train.device": args.device,
        "train.max_steps": args.steps,
        "train.eval_every": args.every,
        "train.patience": 0,
        "train.dtype": args.dtype,
    }
    cfg = apply_overrides(base, over)
    cfgs = [apply_overrides(cfg, {"train.seed": s}) for s in range(args.members)]
    marks = tuple(
        sorted({s for s in (0, args.every, 5 * args.every, 100, 200, 400, 700, args.steps) if s <= args.steps})
    )
    print(f"{args.preset} on {args.device} in {args.dtype}, {args.steps} steps, rows every {args.every}")
    print(f"torch {torch.__version__}")
    if args.device.startswith("cuda"):
        print(
            f"tf32 matmul {torch.backends.cuda.matmul.allow_tf32}, cudnn {torch.backends.cudnn.allow_tf32}, "
            f"{torch.cuda.get_device_name()}"
        )
    t = time.perf_counter()
    a = solo(cfg)
    b = solo(cfg)
    parting("solo vs solo", a, b, marks)
    if not args.quick:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)
        c = solo(cfg)
        d = solo(cfg)
        parting("solo vs solo, deterministic", c, d, marks)
        parting("deterministic vs default solo", c, a, marks)
        torch.use_deterministic_algorithms(False)
    m = member0(cfgs)
    parting(f"member 0 of {args.members} vs solo", m, a, marks)
    m1 = member0(cfgs[:1])
    parting("batched N=1 vs solo", m1, a, marks)
    print(f"({time.perf_counter() - t:.0f} s)")


def steps_by_member(group: Path) -> dict[str, float | None]:
    """member -> its step of 95% val accuracy (None: not reached), from the group's results.csv."""
    try:
        rows = read_group(group).results()
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    if not rows:
        print(f"error: {group} has no results.csv rows (the sweep did not run)", file=sys.stderr)
        sys.exit(2)
    return {m: None if r.generalized_step is None else float(r.generalized_step) for m, r in rows.items()}


def tf32_main(argv: list[str]) -> None:
    """`tf32`: see the module's docstring."""
    ap = argparse.ArgumentParser(
        prog="bench/gpu_agree.py tf32", description="TF32's effect on steps to 95% val accuracy, paired by member."
    )
    ap.add_argument("off", type=Path, help="the group run with train.tf32 = false")
    ap.add_argument("on", type=Path, help="the same sweep with train.tf32 = true")
    a = ap.parse_args(argv)
    off, on = steps_by_member(a.off), steps_by_member(a.on)
    members = sorted(set(off) & set(on))
    both = [(off[m], on[m]) for m in members if off[m] is not None and on[m] is not None]
    only_off = sum(1 for m in members if off[m] is not None and on[m] is None)
    only_on = sum(1 for m in members if off[m] is None and on[m] is not None)
    print(
        f"{len(members)} members in both groups; both reached 95%: {len(both)}; "
        f"fp32 only: {only_off}; tf32 only: {only_on}"
    )
    if not both:
        print("tf32 steps to 95%: no member reached 95% in both arms")
        return
    xs, ys = [b for _, b in both], [o for o, _ in both]
    ratio = statistics.median(b / max(o, 1.0) for o, b in both)
    p = paired(xs, ys)
    d = seed_interval([x - y for x, y in zip(xs, ys, strict=True)])
    equal = sum(1 for o, b in both if o == b)
    print(
        f"tf32 steps to 95%: on − off {spread(d, '+.0f')} over {p['n']} pairs "
        f"(median ratio {ratio:.3f}, {equal} equal, tf32 later in {p['wins']}), sign p {p['sign_p']:.2g}, "
        f"Wilcoxon p {p['wilcoxon_p']:.2g}; 95% in fp32 only {only_off}, tf32 only {only_on}"
    )


# A measured number: not a setting's value (weight_decay=0.01, n=5) nor the 95% of "95% val".
NUMBER = re.compile(r"(?<![=\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?![\d%])")
INTERVAL = re.compile(
    r"= ([-+]?[\d.,]+)(×?) \[([-+]?[\d.,]+), ([-+]?[\d.,]+)\]|, ratio ([\d.]+)× \[([\d.]+), ([\d.]+)\]"
)


def _f(s: str) -> float:
    return float(s.replace(",", ""))


def verdict(line: str) -> str:
    """The verdict of one comparison line (see the module's docstring)."""
    m = INTERVAL.search(line)
    if m:
        if m.group(5):  # only a ratio with its interval
            lo, hi, one = _f(m.group(6)), _f(m.group(7)), 1.0
        else:
            lo, hi = _f(m.group(3)), _f(m.group(4))
            one = 1.0 if m.group(2) else 0.0
        return "above" if lo > one else "below" if hi < one else "spans"
    r = re.search(r"in <?([\d.]+)× the steps of", line)
    if r:
        x = _f(r.group(1))
        return "faster" if x < 1 else "slower" if x > 1 else "equal"
    if "did not reach" in line or "neither arm" in line:
        return "unreached"
    return "note"


def template(line: str) -> str:
    return NUMBER.sub("#", line)


def paper_lines(paper_dir: Path) -> list[str]:
    from engine.records.paper import Paper
    from engine.sweep.report.tables import build_tables

    paper = Paper.open(paper_dir)
    out: list[str] = []
    for s in paper.sweeps:
        if not s.group:
            out.append(f"{s.preset}\tnot run\t-\t-")
            continue
        _, lines = build_tables(read_group(paper.dir / s.group).group)
        for line in lines:
            v = verdict(line)
            if v != "note":
                out.append(f"{s.preset}\t{v}\t{template(line)}\t{line}")
    return out


def compare_verdicts(a: Path, b: Path) -> None:
    def read(p: Path) -> dict[tuple[str, str], str]:
        rows = [ln.rstrip("\n").split("\t") for ln in p.read_text().splitlines() if ln.count("\t") >= 3]
        return {(r[0], r[2]): r[1] for r in rows}

    va, vb = read(a), read(b)
    same = moved = 0
    for key in sorted(set(va) | set(vb)):
        x, y = va.get(key, "-"), vb.get(key, "-")
        state = "same" if x == y else "MOVED"
        same += x == y
        moved += x != y
        print(f"{state:5}  {key[0]:<24} {x:>9} -> {y:<9} {key[1][:110]}")
    print(f"verdicts: {same} the same, {moved} moved or in one run only ({a.name} -> {b.name})")


def verdicts_main(argv: list[str]) -> None:
    """`verdicts`: see the module's docstring."""
    ap = argparse.ArgumentParser(
        prog="bench/gpu_agree.py verdicts",
        description="Each claim's verdicts in a paper directory, or two such lists compared.",
    )
    ap.add_argument("paper", nargs="?", type=Path, help="a paper directory (grok sweep --preset paper)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="two outputs of this script")
    a = ap.parse_args(argv)
    if a.compare:
        compare_verdicts(*a.compare)
    elif a.paper is not None:
        if not (a.paper / "paper.json").exists():
            print(f"error: {a.paper} is not a paper directory (no paper.json)", file=sys.stderr)
            sys.exit(2)
        print("\n".join(paper_lines(a.paper)))
    else:
        ap.error("give a paper directory or --compare A B")


COMMANDS = {"compare": compare_main, "divergence": divergence_main, "tf32": tf32_main, "verdicts": verdicts_main}


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python bench/gpu_agree.py {{{','.join(COMMANDS)}}} [options] (--help after one for its own)")
    sys.exit(COMMANDS[sys.argv[1]](sys.argv[2:]))
