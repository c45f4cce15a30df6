"""The batches `grok sweep --preset paper` forms on a GPU: members per stacked model, sweep by sweep.

    python bench/paper_batches.py [--device cuda] [--workers N] [--free-gib G] [--set k=v ...]

The card's free memory is asked of the card (`torch.cuda.mem_get_info`) unless --free-gib gives it, so
this also answers for a card that is not here. --workers is the sweep's (default: one per core, as
`grok sweep`); each worker may hold a batch on the card at once. Members are expanded as the sweep
expands them (engine/sweep/spec.py), with train.device set to --device; a fork member starts from
its parent's checkpoint and so trains alone. The sizing is engine/sweep/card_memory.py's; `plan` is
engine/sweep/batched.py's, the one the sweep calls.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from engine.config import ConfigError, apply_overrides, parse_set
from engine.config.presets import load_preset
from engine.sweep.batched import plan
from engine.sweep.card_memory import MAX_MEMBERS, MEMORY_FRACTION, free_bytes, member_bytes
from engine.sweep.member import MemberSpec
from engine.sweep.paper import PAPER_SWEEPS
from engine.sweep.pool import default_workers
from engine.sweep.spec import expand, parse_sweep

GIB = 2**30


def sizes(batches: list[list[MemberSpec]]) -> str:
    """`2×128 + 1×40 + 3 alone`: the stacked batches by size, then the members that train alone."""
    stacked = Counter(len(b) for b in batches if len(b) > 1)
    alone = sum(1 for b in batches if len(b) == 1)
    parts = [f"{k}×{n}" for n, k in sorted(stacked.items(), reverse=True)]
    return " + ".join(parts + ([f"{alone} alone"] if alone else [])) or "none"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--workers", type=int, default=0, help="the sweep's workers; 0 = one per core")
    ap.add_argument("--free-gib", type=float, default=0.0, help="the card's free memory; 0 = ask the card")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="k=v for every member (repeat)")
    args = ap.parse_args()
    try:
        sets = parse_set(args.sets) | {"train.device": args.device}
    except ConfigError as e:
        ap.error(str(e))  # one line on stderr, exit 2
    workers = args.workers or default_workers()
    on_card = args.device.startswith("cuda")
    free = int(args.free_gib * GIB) if args.free_gib or not on_card else free_bytes(args.device)
    if on_card:
        print(
            f"card: {free / GIB:.1f} GiB free, {workers} workers, {MEMORY_FRACTION:.0%} of it for the batches, "
            f"at most {MAX_MEMBERS} members a batch"
        )
    else:
        print(f"device {args.device}: no card, every member alone (a CPU sweep runs its members one by one)")
    total = Counter[int]()
    for name, _ in PAPER_SWEEPS:
        p = load_preset(name)
        spec = parse_sweep(p.sweep, str(p.path))
        try:
            members = [(m, apply_overrides(c, sets)) for m, c in expand(p.config, spec, str(p.path))]
        except ConfigError as e:
            print(f"error: {e}", file=sys.stderr)
            raise SystemExit(2) from None
        specs = [MemberSpec(m.id, c, f"{name}/{m.id}", has_checkpoint=bool(m.fork_of)) for m, c in members]
        batches = plan(specs, workers=workers, free=free)
        total.update(len(b) for b in batches)
        one = member_bytes(members[0][1]).total
        print(f"{name:24s} {len(specs):4d} members, {one / 2**20:5.1f} MiB each: {sizes(batches)}")
    print(f"all: {sum(n * k for n, k in total.items())} members in {sum(total.values())} batches")


if __name__ == "__main__":
    main()
