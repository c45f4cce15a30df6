"""λmax of the loss Hessian restricted to E, to W and to all parameters (App. C.1, Figs. 7, 9).

Power iteration on Hessian-vector products, reverse over reverse: the gradient g = ∇_B L is built once
per measurement with its own graph, and each product is one more backward pass, Hv = ∇_B ⟨g, v⟩ (the
Hessian is symmetric). It runs on detached copies of the parameters made leaves of their own, so the
model's `.grad`, the optimizer state and torch's global RNG are never touched. Plain autograd, not
torch.func's grad/jvp: under those transforms the first Linear goes through a decomposition wrapped by
torch._compile, which imports torch._dynamo (about 1 CPU-second on the 2-core CPU, a third of a
`grok run --steps 1` of a preset with this probe due at step 0; docs/PERFORMANCE.md).

Three readings of the paper's "maximum eigenvalue of the Hessian", each a probe option named in the
column (docs/PROBES.md): `probe.hessian_l2` adds the L2 term (wd/2)‖θ‖² of the objective, whose
Hessian is wd·I (suffix `_l2`); `probe.hessian_abs` reports the dominant eigenvalue, largest |λ| with
its sign, which is what the paper's power method v_kᵀHv_k converges to (suffix `_abs`; default: the
largest algebraic λ); `probe.hessian_w = "all"` takes W as every parameter but E (`hess_Wall`;
default `first`: the matrices that read E, `hess_W`).

On a GPU each power-iteration step's host read (is it converged?) waits for the queue to drain, and the
HVPs are many small kernels. There the probe runs `device_power_iteration`: every one of the
`probe.hessian_iters` HVPs, with the stopping rule evaluated on the device and each result frozen at the
first iteration that meets it, so the numbers are `power_iteration`'s; the whole measurement (the probe
batch is fixed, the weights are read in place) is recorded once as a CUDA graph and replayed, and its
results come to the host in one read. On the CPU, where a read costs nothing and stopping early saves
HVPs, the host loop stays (tests/engine/test_probes_hessian.py checks that the two agree).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch.func import functional_call  # torch.nn.utils.stateless underneath: no torch._dynamo

from engine.probes.base import NAN, PROBE_SEED_OFFSET, Blocks, Probe, ProbeContext
from engine.probes.recorder import cuda_recorder, eager_recorder

if TYPE_CHECKING:
    from engine.config import ProbeConfig

HVP = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class Eig:
    """One power-iteration result: Rayleigh quotient, its vector, HVPs spent, whether it met the tolerance."""

    value: float
    vector: torch.Tensor
    iters: int
    converged: bool


def power_iteration(
    hvp: HVP, v0: torch.Tensor, max_iters: int, tol: float, should_stop: Callable[[], bool] | None = None
) -> Eig:
    """The eigenvalue of largest |λ| (App. C.1: v ← Hv/‖Hv‖, λ ≈ vᵀHv).

    Stops when λ changes by at most tol·|λ| between iterations and the residual ‖Hv − λv‖ is at most
    √tol·|λ|. The residual check rules out a false stop on a ±λ pair of equal size, where the Rayleigh
    quotient stalls while v keeps flipping; by Kato–Temple the error in λ is then O(tol·λ²/gap).
    """
    v = v0 / v0.norm()
    lam, prev = NAN, NAN
    for k in range(1, max_iters + 1):
        if should_stop is not None and should_stop():
            return Eig(NAN, v, k - 1, False)
        hv = hvp(v)
        # λ, ‖Hv‖ and the residual in one host read (on a GPU each read waits for the queue to drain)
        lam_t = torch.dot(v, hv)
        lam, size, res = torch.stack([lam_t, hv.norm(), (hv - lam_t * v).norm()]).tolist()
        if size == 0.0 or not math.isfinite(size):  # no curvature along v (or a non-finite loss)
            return Eig(0.0 if size == 0.0 else NAN, v, k, size == 0.0)
        converged = abs(lam - prev) <= tol * abs(lam) and res <= math.sqrt(tol) * abs(lam)
        v = hv / size
        prev = lam
        if converged:
            return Eig(lam, v, k, True)
    return Eig(lam, v, max_iters, False)


def largest_eigenvalue(
    hvp: HVP,
    v0: torch.Tensor,
    v0_shift: torch.Tensor,
    max_iters: int,
    tol: float,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[Eig, Eig | None]:
    """λmax, the largest algebraic eigenvalue: (dominant, shifted) results, the second None if not needed.

    Power iteration finds λ1, the eigenvalue of largest |λ|. If λ1 ≥ 0 it is λmax. If λ1 < 0, the spectrum
    of H − λ1·I is λ_i − λ1 ≥ 0 and its dominant eigenvalue is λmax − λ1, so a second power iteration on the
    shifted operator gives λmax = μ + λ1. Each phase has its own cap of max_iters HVPs.
    """
    first = power_iteration(hvp, v0, max_iters, tol, should_stop)
    if not first.value < 0:
        return first, None
    lam1 = first.value
    second = power_iteration(lambda v: hvp(v) - lam1 * v, v0_shift, max_iters, tol, should_stop)
    return first, second


@dataclass
class DeviceEig:
    """`power_iteration`'s result as device tensors: λ, HVPs to the stop, whether it met the rule, v."""

    value: torch.Tensor
    iters: torch.Tensor
    converged: torch.Tensor
    vector: torch.Tensor


def device_power_iteration(hvp: HVP, v0: torch.Tensor, max_iters: int, tol: float) -> DeviceEig:
    """`power_iteration` without a host read: all max_iters HVPs run, and λ, the count and v are frozen
    at the first iteration that stops the host loop (converged, no curvature, or a non-finite ‖Hv‖)."""
    v = v0 / v0.norm()
    nan = torch.full((), NAN, dtype=v.dtype, device=v.device)
    value, prev = nan.clone(), nan.clone()
    iters = torch.zeros((), dtype=torch.int64, device=v.device)
    done = torch.zeros((), dtype=torch.bool, device=v.device)
    converged = done.clone()
    for k in range(1, max_iters + 1):
        hv = hvp(v)
        lam = torch.dot(v, hv)
        size, res = hv.norm(), (hv - lam * v).norm()
        zero, bad = size == 0, ~size.isfinite()
        met = ((lam - prev).abs() <= tol * lam.abs()) & (res <= math.sqrt(tol) * lam.abs())
        live = ~done
        value = torch.where(live, torch.where(zero, torch.zeros_like(lam), torch.where(bad, nan, lam)), value)
        iters = torch.where(live, k, iters)
        converged = torch.where(live, zero | (met & ~bad), converged)
        v = torch.where(live & ~zero & ~bad, hv / size, v)
        done = done | zero | bad | met
        prev = lam
    return DeviceEig(value, iters, converged, v)


def shifted_hvp(hvp: HVP, lam1: torch.Tensor) -> HVP:
    """v ↦ (H − λ1·I)v, λ1 a device tensor (`largest_eigenvalue`'s second phase)."""
    return lambda v: hvp(v) - lam1 * v


def block_hvp(
    model: torch.nn.Module,
    loss_fn: Callable[..., torch.Tensor],
    x: torch.Tensor,
    y: torch.Tensor,
    names: list[str],
    weights: dict[str, torch.Tensor] | None = None,
    l2: float = 0.0,
) -> tuple[HVP, int]:
    """v ↦ H_BB v for the block B = `names` of the mean loss on (x, y), on flat vectors; and dim(B).

    `weights` are the parameters to differentiate at (default: the model's own). `l2` = wd adds the
    Hessian of the L2 term (wd/2)‖θ‖², wd·I, so the operator is that of the regularized objective.
    """
    source = weights if weights is not None else dict(model.named_parameters())
    params = {n: p.detach() for n, p in source.items()}
    buffers = {n: b.detach() for n, b in model.named_buffers()}
    leaves = [params[n].detach().requires_grad_(True) for n in names]  # new leaves: the model's own stay untouched
    block = dict(zip(names, leaves, strict=True))
    fixed = {n: t for n, t in params.items() if n not in block}
    shapes = [(t.shape, t.numel()) for t in leaves]
    with torch.enable_grad():  # the probes run at evaluation, which may be under no_grad
        loss = loss_fn(functional_call(model, ({**fixed, **block}, buffers), (x,)), y)
        grads: tuple[torch.Tensor | None, ...] = (
            torch.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)  # ∇_B L, differentiable
            if loss.requires_grad
            else (None,) * len(leaves)  # the loss reads no parameter of the block: H_BB = 0
        )
    # The parts of ∇_B L that depend on θ; one that does not (or a parameter the loss never reads) has a
    # zero row block in H.
    live = [(i, g) for i, g in enumerate(grads) if g is not None and g.requires_grad]

    def hvp(v: torch.Tensor) -> torch.Tensor:
        parts = [p.view(shape) for p, (shape, _) in zip(v.split([n for _, n in shapes]), shapes, strict=True)]
        hv: list[torch.Tensor | None] = [None] * len(leaves)
        if live:
            # ∇_B ⟨g, v⟩ = H v: one backward through g's graph, kept for the next v. The scalar ⟨g, v⟩, not
            # grad_outputs=v: autograd checks grad_outputs' shapes with torch.fx's symbolic shapes, whose
            # import (sympy) costs about 0.3 CPU-s; its backward hands g exactly v, so Hv is the same.
            with torch.enable_grad():
                gv = torch.stack([torch.dot(g.reshape(-1), parts[i].reshape(-1)) for i, g in live]).sum()
                hv = list(torch.autograd.grad(gv, leaves, retain_graph=True, allow_unused=True))
        out = torch.cat(
            [torch.zeros_like(p).reshape(-1) if h is None else h.reshape(-1) for h, p in zip(hv, parts, strict=True)]
        )
        return out + l2 * v if l2 else out

    return hvp, sum(n for _, n in shapes)


def column_suffix(l2: bool, dominant: bool) -> str:
    """The option suffix of a Hessian column: `_abs` for the dominant λ, then `_l2` for the L2 term."""
    return ("_abs" if dominant else "") + ("_l2" if l2 else "")


def block_columns(pc: ProbeConfig) -> tuple[str, str]:
    """The columns λmax(E) and λmax(W) go into under these probe options (Fig. 7's two curves)."""
    suffix = column_suffix(pc.hessian_l2, pc.hessian_abs)
    return f"hess_E{suffix}", f"hess_{'Wall' if pc.hessian_w == 'all' else 'W'}{suffix}"


class HessianProbe(Probe):
    """hess_E, hess_W (or hess_Wall), [hess_all], each with its option suffix, and hess_iters, on a fixed
    probe batch, warm-started between evaluations."""

    name = "hessian"

    def __init__(self, ctx: ProbeContext, blocks: Blocks) -> None:
        cfg = ctx.cfg
        super().__init__(cfg.probe.hessian_every)
        pc = cfg.probe
        self.ctx = ctx
        self.max_iters, self.tol = pc.hessian_iters, pc.hessian_tol
        self.blocks: dict[str, list[str]] = {}
        if blocks.e_names:
            self.blocks["E"] = blocks.e_names
        if pc.hessian_w == "all":  # every downstream parameter: all but E
            rest = [n for n in blocks.params if n not in blocks.e_names]
            if rest:
                self.blocks["Wall"] = rest
        elif blocks.w_names:
            self.blocks["W"] = blocks.w_names
        if pc.hessian_all:
            self.blocks["all"] = list(blocks.params)
        # The L2 term of coupled weight decay (Adam's and SGD's, which add wd·θ to the gradient): wd·I.
        self.l2 = cfg.optim.weight_decay if pc.hessian_l2 else 0.0
        self.dominant = pc.hessian_abs
        self.suffix = column_suffix(pc.hessian_l2, pc.hessian_abs)
        self.columns = [f"hess_{k}{self.suffix}" for k in self.blocks] + ["hess_iters"]
        self.gen = torch.Generator().manual_seed(cfg.train.seed + PROBE_SEED_OFFSET)
        n = len(ctx.x_train)
        m = pc.hessian_batch
        # The probe batch is fixed for the whole run, so λmax(t) tracks the weights, not batch noise.
        self.batch = None if m == 0 or m >= n else torch.randperm(n, generator=self.gen)[:m].sort().values
        self.vectors: dict[str, torch.Tensor] = {}  # warm starts: "E", "E~" (shifted phase), ...
        # "device" on a GPU (one host read per measurement, recorded as a CUDA graph), else "host"
        self.mode = "device" if ctx.x_train.is_cuda else "host"
        self.recording: DeviceMeasurement | None = None
        self.graph_off: str | None = None  # why the device measurement runs eager (a refused recording)

    def _start(self, key: str, size: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
        v = self.vectors.get(key)
        if v is None or v.numel() != size:
            v = torch.randn(size, generator=self.gen, dtype=torch.float64)
            if device.type == "cuda":  # from pinned memory the copy is queued, not waited for (engine/task/samplers.py)
                v = v.pin_memory().to(device, non_blocking=True)
        return v.to(device=device, dtype=dtype)

    def probe_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The fixed probe batch (x, y), gathered on the run's device."""
        x, y = self.ctx.x_train, self.ctx.y_train
        if self.batch is None:
            return x, y
        if self.batch.device != x.device:
            self.batch = self.batch.to(x.device)  # once: the indices stay on the device
        return x[self.batch], y[self.batch]

    def measure(self, step: int) -> dict[str, Any]:
        if self.mode == "device":
            return self._measure_on_device()
        ctx = self.ctx
        x, y = self.probe_batch()
        dtype = next(iter(ctx.params.values())).dtype
        out: dict[str, Any] = {}
        iters = 0
        for key, names in self.blocks.items():
            hvp, size = block_hvp(ctx.model, ctx.loss_fn, x, y, names, ctx.params, self.l2)
            v0 = self._start(key, size, x.device, dtype)
            if self.dominant:  # the paper's power method: the eigenvalue of largest |λ|, sign kept
                first = power_iteration(hvp, v0, self.max_iters, self.tol, ctx.stop_requested)
                second = None
            else:
                v0s = self._start(key + "~", size, x.device, dtype)
                first, second = largest_eigenvalue(hvp, v0, v0s, self.max_iters, self.tol, ctx.stop_requested)
            self.vectors[key] = first.vector.detach().cpu()
            value, spent = first.value, first.iters
            if second is not None:
                self.vectors[key + "~"] = second.vector.detach().cpu()
                value, spent = second.value + first.value, spent + second.iters
            out[f"hess_{key}{self.suffix}"] = value
            iters = max(iters, spent)
        out["hess_iters"] = iters
        return out

    def _measure_on_device(self) -> dict[str, Any]:
        """The measurement as `measure` gives it, from `DeviceMeasurement`: one host read."""
        ctx = self.ctx
        dtype = next(iter(ctx.params.values())).dtype
        device = ctx.x_train.device
        starts = {}
        for key, names in self.blocks.items():
            size = sum(ctx.params[n].numel() for n in names)
            starts[key] = self._start(key, size, device, dtype)
            if not self.dominant:
                starts[key + "~"] = self._start(key + "~", size, device, dtype)
        if self.recording is None:
            self.recording = DeviceMeasurement(self, starts)
        if self.recording.graph is None and self.graph_off is None and self.recording.recorder is not None:
            try:
                self.recording.record()
            except RuntimeError as e:  # the capture refused: the same measurement, run eagerly
                self.graph_off = "recording failed: " + (str(e).splitlines() or [type(e).__name__])[0][:160]
                self.recording.recorder = None
        results, vectors = self.recording.run(starts)
        host = torch.stack(results).tolist()  # the one read per measurement
        out: dict[str, Any] = {}
        iters = 0
        for j, key in enumerate(self.blocks):
            value, spent, shifted = host[3 * j : 3 * j + 3]
            self.vectors[key] = vectors[key]
            if shifted:  # λ1 < 0: the shifted phase's λmax and its vector, as `largest_eigenvalue`
                self.vectors[key + "~"] = vectors[key + "~"]
            out[f"hess_{key}{self.suffix}"] = value
            iters = max(iters, int(spent))
        out["hess_iters"] = iters
        return out

    def state_dict(self) -> dict[str, Any]:
        vectors = {k: v.detach().cpu() for k, v in self.vectors.items()}
        return {**super().state_dict(), "vectors": vectors, "gen": self.gen.get_state()}

    def load_state_dict(self, s: dict[str, Any]) -> None:
        super().load_state_dict(s)
        self.vectors = dict(s.get("vectors", {}))
        if "gen" in s:
            self.gen.set_state(s["gen"])


class DeviceMeasurement:
    """A Hessian measurement with no host read inside it: for each block, the dominant power iteration
    and (unless `probe.hessian_abs`) the shifted one, always run and kept where λ1 < 0. Its inputs are
    the warm starts, copied into fixed tensors, and the weights, read in place; so on a GPU it is recorded
    once (`record`) and each later measurement is one replay (engine/probes/recorder.py)."""

    def __init__(self, probe: HessianProbe, starts: dict[str, torch.Tensor]) -> None:
        self.probe = probe
        self.starts = {k: v.clone() for k, v in starts.items()}  # the recording's inputs
        self.results: list[torch.Tensor] = []
        self.vectors: dict[str, torch.Tensor] = {}
        self.graph: Callable[[], None] | None = None
        self.recorder: Callable[[Callable[[], None]], Callable[[], None]] | None = (
            cuda_recorder if probe.ctx.x_train.is_cuda else eager_recorder
        )

    def compute(self) -> None:
        """Every block's λ, HVP count and shifted flag (3 per block) and its new warm starts, on the device."""
        p = self.probe
        ctx = p.ctx
        x, y = p.probe_batch()
        results: list[torch.Tensor] = []
        for key, names in p.blocks.items():
            hvp, _ = block_hvp(ctx.model, ctx.loss_fn, x, y, names, ctx.params, p.l2)
            first = device_power_iteration(hvp, self.starts[key], p.max_iters, p.tol)
            self.vectors[key] = first.vector.detach()
            value, spent = first.value, first.iters
            shifted = torch.zeros((), dtype=torch.bool, device=value.device)
            if not p.dominant:
                lam1 = first.value
                second = device_power_iteration(shifted_hvp(hvp, lam1), self.starts[key + "~"], p.max_iters, p.tol)
                shifted = lam1 < 0
                value = torch.where(shifted, second.value + lam1, value)
                spent = torch.where(shifted, spent + second.iters, spent)
                self.vectors[key + "~"] = second.vector.detach()
            results += [value, spent.to(value.dtype), shifted.to(value.dtype)]
        self.results = results

    def record(self) -> None:
        """Warm up (the first measurement's lazy set-up, on a side stream on a GPU) and record `compute`."""
        assert self.recorder is not None
        side = torch.cuda.Stream() if self.probe.ctx.x_train.is_cuda else None
        if side is not None:
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.compute()
            torch.cuda.current_stream().wait_stream(side)
        self.graph = self.recorder(self.compute)

    def run(self, starts: dict[str, torch.Tensor]) -> tuple[list[torch.Tensor], dict[str, torch.Tensor]]:
        """One measurement from these warm starts: the results (device tensors) and the new warm starts."""
        for k, v in starts.items():
            self.starts[k].copy_(v)
        if self.graph is not None:
            self.graph()
        else:
            self.compute()
        return list(self.results), {k: v.clone() for k, v in self.vectors.items()}
