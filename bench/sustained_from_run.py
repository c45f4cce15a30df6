"""Steps/s over steps 0–1k and 2k–6k of a finished headless run, from its metrics.csv wall_s column.

    grok run --preset random_mul --steps 6000 --out runs/sustained
    python bench/sustained_from_run.py runs/sustained/<run>

This is the engine exactly as `grok run` uses it (its own loop thread, evaluations included), and it
counts the subnormal floats left in the final checkpoint's weights and Adam moments.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from engine.rundir import CHECKPOINT, read_metrics

TINY = torch.finfo(torch.float32).tiny  # smallest normal float32


def main() -> None:
    run = Path(sys.argv[1])
    wall = {int(r["step"]): r["wall_s"] for r in read_metrics(run)}

    def rate(a: int, b: int) -> float:
        return (b - a) / (wall[b] - wall[a])

    r0, r1 = rate(0, 1000), rate(2000, 6000)
    print(f"{run.name}: steps 0-1k {r0:.1f} steps/s, 2k-6k {r1:.1f} steps/s, ratio {r1 / r0:.3f} (target >= 0.90)")
    print("per 500 steps:", " ".join(f"{rate(s, s + 500):.0f}" for s in range(0, 6000, 500)))
    ck = torch.load(run / CHECKPOINT, map_location="cpu", weights_only=False)
    tensors = list(ck["model"].values()) + [
        t for st in ck["opt"]["state"].values() for t in st.values() if torch.is_tensor(t) and t.numel() > 1
    ]
    sub = sum(int(((t != 0) & (t.float().abs() < TINY)).sum()) for t in tensors)
    print(f"subnormal floats in weights and Adam moments at the end: {sub} of {sum(t.numel() for t in tensors)}")


if __name__ == "__main__":
    main()
