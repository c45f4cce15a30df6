"""Each claim's verdicts in a paper directory, as words a CPU run and a GPU run can be compared by.

    python bench/paper_verdicts.py PAPER_DIR > verdicts.txt        # one line per comparison
    python bench/paper_verdicts.py --compare CPU.txt GPU.txt        # the same comparisons, verdict by verdict

For every sweep of the paper (paper.json) the comparison lines of `grok report GROUP` (arm ratios of
steps to 95% val, then the paired differences by seed, engine/sweep/report/paired.py) are reduced to a verdict:
a paired difference or ratio whose 95% interval lies on one side of 0 (or 1) is `below` or `above`, one
that spans it `spans`; an arm ratio without an interval is `faster`, `slower` or `equal`; a line about
unreached seeds says so. Each line is `preset <TAB> verdict <TAB> template <TAB> the report's line`,
the template being the line with its measured numbers replaced by # (settings such as weight_decay=0.01
kept): what `--compare` matches CPU and GPU lines by. Compare verdicts, not digits: the GPU's rounding parts seeds.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

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
    from engine.sweep.spec import Group

    paper = Paper.open(paper_dir)
    out: list[str] = []
    for s in paper.sweeps:
        if not s.group:
            out.append(f"{s.preset}\tnot run\t-\t-")
            continue
        _, lines = build_tables(Group.open(paper.dir / s.group))
        for line in lines:
            v = verdict(line)
            if v != "note":
                out.append(f"{s.preset}\t{v}\t{template(line)}\t{line}")
    return out


def compare(a: Path, b: Path) -> None:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paper", nargs="?", type=Path, help="a paper directory (grok sweep --preset paper)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="two outputs of this script")
    a = ap.parse_args()
    if a.compare:
        compare(*a.compare)
    elif a.paper is not None:
        if not (a.paper / "paper.json").exists():
            print(f"error: {a.paper} is not a paper directory (no paper.json)", file=sys.stderr)
            sys.exit(2)
        print("\n".join(paper_lines(a.paper)))
    else:
        ap.error("give a paper directory or --compare A B")


if __name__ == "__main__":
    main()
