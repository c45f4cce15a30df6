"""TF32's effect on steps to 95% val accuracy: one sweep run twice, train.tf32 off and on, paired by member.

    python bench/tf32_pairs.py OFF_GROUP_DIR ON_GROUP_DIR

Each member (same config and seed in both groups) gives one pair of `generalized_step` values (the step
of 95% val accuracy, from results.csv); pairs where both runs reached 95% are compared with the report's
paired statistics (engine/sweep/stats.py: mean difference on − off with its 95% bootstrap interval, the
sign-test and Wilcoxon p), and the members that reached 95% in only one arm are counted. The last line,
`tf32 steps to 95%`, is what bench/gpu_check.sh puts in its table.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

from engine.sweep.stats import num, paired


def steps_by_member(group: Path) -> dict[str, float | None]:
    """member -> its step of 95% val accuracy (None: not reached), from the group's results.csv."""
    path = group / "results.csv"
    if not path.exists():
        print(f"error: {group} has no results.csv (not a sweep group, or it did not run)", file=sys.stderr)
        sys.exit(2)
    with path.open() as f:
        return {r["member"]: num(r.get("generalized_step")) for r in csv.DictReader(f)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("off", type=Path, help="the group run with train.tf32 = false")
    ap.add_argument("on", type=Path, help="the same sweep with train.tf32 = true")
    a = ap.parse_args()
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
    equal = sum(1 for o, b in both if o == b)
    print(
        f"tf32 steps to 95%: on − off {p['diff_mean']:+.0f} [{p['lo']:+.0f}, {p['hi']:+.0f}] over {p['n']} pairs "
        f"(median ratio {ratio:.3f}, {equal} equal, tf32 later in {p['wins']}), sign p {p['sign_p']:.2g}, "
        f"Wilcoxon p {p['wilcoxon_p']:.2g}; 95% in fp32 only {only_off}, tf32 only {only_on}"
    )


if __name__ == "__main__":
    main()
