"""Cost of one Hessian-vector product of the Hessian probe, against the forward-over-reverse one it replaced.

The probe (engine/probes/hessian.py) builds ∇_B L once per measurement with its graph and takes each
HVP as one more backward pass (reverse over reverse). Until issue 26 it was forward over reverse,
torch.func's jvp of grad, which recomputes the forward and backward at every product and imports
torch._dynamo on its first call. This builds the preset's model (trained `--steps` steps first, so the
weights are not the init's), takes the probe's fixed batch, and for each block (E, W, all of θ) times,
alternating the two arms in one process, the set-up and `--hvps` products, as CPU and wall seconds per
product. It also prints the largest relative difference between the two arms' Hv (float rounding).
The reference arm runs first once, untimed, so its torch._dynamo import is not counted against it:
that import is reported on its own line. Usage:

    python bench/bench_hvp.py [--preset random_mul] [--steps 200] [--hvps 20] [--rounds 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import torch

from engine.config import apply_overrides
from engine.presets import resolve_config
from engine.probes.base import Blocks
from engine.probes.hessian import block_hvp
from engine.trainer import Trainer

HVP = Callable[[torch.Tensor], torch.Tensor]


def forward_over_reverse(model, loss_fn, x, y, names, weights) -> HVP:  # type: ignore[no-untyped-def]
    """The probe's HVP before issue 26: Hv = J_v(∇L)(θ) with torch.func (imports torch._dynamo)."""
    from torch.func import functional_call, grad, jvp

    params = {n: p.detach() for n, p in weights.items()}
    buffers = {n: b.detach() for n, b in model.named_buffers()}
    block = {n: params[n] for n in names}
    fixed = {n: t for n, t in params.items() if n not in block}
    shapes = [(n, t.shape, t.numel()) for n, t in block.items()]

    def loss(b: dict[str, torch.Tensor]) -> torch.Tensor:
        return loss_fn(functional_call(model, ({**fixed, **b}, buffers), (x,)), y)

    grad_fn = grad(loss)

    def hvp(v: torch.Tensor) -> torch.Tensor:
        tangent, i = {}, 0
        for n, shape, size in shapes:
            tangent[n] = v[i : i + size].view(shape)
            i += size
        hv = jvp(grad_fn, (block,), (tangent,))[1]
        return torch.cat([hv[n].reshape(-1) for n, _, _ in shapes])

    return hvp


def timed(make: Callable[[], HVP], vs: list[torch.Tensor]) -> tuple[float, float, list[torch.Tensor]]:
    """(CPU s, wall s) per product, set-up included, and the products."""
    c, w = time.process_time(), time.perf_counter()
    hvp = make()
    out = [hvp(v) for v in vs]
    n = len(vs)
    return (time.process_time() - c) / n, (time.perf_counter() - w) / n, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="random_mul")
    ap.add_argument("--steps", type=int, default=200, help="training steps before measuring")
    ap.add_argument("--hvps", type=int, default=20, help="products per timing (the probe's default cap is 20)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating (engine, reference) rounds")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    base, _ = resolve_config(preset=args.preset)
    cfg = apply_overrides(base, {"train.max_steps": args.steps, "train.threads": args.threads, "train.device": "cpu"})
    tr = Trainer(cfg)
    for _ in tr:
        pass
    torch.set_num_threads(args.threads)
    m = cfg.probe.hessian_batch
    gen = torch.Generator().manual_seed(0)
    x, y = tr.x_train, tr.y_train
    if 0 < m < len(x):
        idx = torch.randperm(len(x), generator=gen)[:m]
        x, y = x[idx], y[idx]
    weights = dict(tr.model.named_parameters())
    b = Blocks.of(tr.model, cfg)
    blocks = {"E": b.e_names, "W": b.w_names, "all": list(weights)}
    print(f"preset {args.preset}, {args.steps} steps trained, probe batch {len(x)}, threads {args.threads}")

    c, w = time.process_time(), time.perf_counter()
    forward_over_reverse(tr.model, tr.loss_fn, x, y, b.e_names, weights)(torch.ones(weights[b.e_names[0]].numel()))
    print(
        f"reference arm's first call (imports torch._dynamo: {'torch._dynamo' in sys.modules}): "
        f"{time.process_time() - c:.2f} CPU s, {time.perf_counter() - w:.2f} s wall"
    )

    for key, names in blocks.items():
        size = sum(weights[n].numel() for n in names)
        vs = [torch.randn(size, generator=gen, dtype=weights[names[0]].dtype) for _ in range(args.hvps)]
        ours, ref, ratio = [], [], []
        for _ in range(args.rounds):
            c1, w1, h1 = timed(lambda names=names: block_hvp(tr.model, tr.loss_fn, x, y, names, weights)[0], vs)
            c2, w2, h2 = timed(lambda names=names: forward_over_reverse(tr.model, tr.loss_fn, x, y, names, weights), vs)
            ours.append((c1, w1))
            ref.append((c2, w2))
            ratio.append(c2 / c1)
        diff = max(float((a - r).norm() / r.norm()) for a, r in zip(h1, h2, strict=True))
        med = lambda xs, i: statistics.median(t[i] for t in xs) * 1e3  # noqa: E731
        print(
            f"{key:>3} ({size} parameters): reverse over reverse {med(ours, 0):.1f} ms CPU ({med(ours, 1):.1f} wall), "
            f"forward over reverse {med(ref, 0):.1f} ms CPU ({med(ref, 1):.1f} wall) per HVP; "
            f"CPU speed-up median {statistics.median(ratio):.2f}x (range {min(ratio):.2f}-{max(ratio):.2f}); "
            f"max relative difference of Hv {diff:.1e}"
        )


if __name__ == "__main__":
    main()
