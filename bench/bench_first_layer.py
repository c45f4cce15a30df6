"""The first layer alone, forward + backward: `Linear(Embedding(x).flatten(1))` against the gathered tables.

p=97 (V=99), d=128, hidden 512, batch 512; the two arms alternate in one process. Usage:

    python bench/bench_first_layer.py [--threads 1] [--reps 15]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from engine.models.first_layer import gathered_first_layer

V, L, d, H, B = 99, 4, 128, 512, 512


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads; 0 = auto (engine/threads.py)")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    E = torch.randn(V, d, requires_grad=True)
    W = torch.randn(H, L * d, requires_grad=True)
    b = torch.randn(H, requires_grad=True)
    x = torch.randint(0, V, (B, L))
    g = torch.randn(B, H)
    arms = {
        "plain": lambda: F.linear(F.embedding(x, E).flatten(1), W, b),
        "gathered": lambda: gathered_first_layer(x, E, W, b),
    }
    grads = {}
    for name, fn in arms.items():
        E.grad = W.grad = b.grad = None
        out = fn()
        out.backward(g)
        grads[name] = [out.detach(), E.grad, W.grad, b.grad]
    err = max(float((p - q).abs().max() / p.abs().max()) for p, q in zip(*grads.values(), strict=True))
    ms: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(args.reps):
        for name, fn in arms.items():
            t = time.perf_counter()
            for _ in range(5):
                E.grad = W.grad = b.grad = None
                fn().backward(g)
            ms[name].append((time.perf_counter() - t) / 5 * 1e3)
    print(f"threads {torch.get_num_threads()}, {args.reps} reps of 5, max relative difference {err:.1e}")
    for name, v in ms.items():
        print(f"{name:<9} median {statistics.median(v):6.2f} ms   best {min(v):6.2f} ms")
    print(f"plain / gathered: {statistics.median(ms['plain']) / statistics.median(ms['gathered']):.2f}x (medians)")


if __name__ == "__main__":
    main()
