"""Throughput measurements behind `grok bench` and bench/ab.py: the matmul ceiling, the peer loop, the engine.

Every arm is built untimed, then trained in chunks that alternate between arms (A, B, A, B, ...) so
that a change in machine load hits all of them; the figures are medians over chunks.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from engine.config import RunConfig, apply_overrides
from engine.config.presets import load_preset
from engine.config.resolve import resolve
from engine.events import StepsTaken
from engine.models.first_layer import tables_pay
from engine.task.dataset import load_dataset
from engine.train.trainer import PROGRESS_EVERY, Trainer, resolve_device

Stepper = Callable[[int], None]  # trains n steps and returns once the device is idle


def bench_config(preset: str = "random_mul", device: str = "cpu", threads: int = 0, **over: object) -> RunConfig:
    """The paper's config (p=97, d=128, batch 512, mul) with a device and thread count."""
    return resolve(load_preset(preset), {"train.threads": threads, **over}, device=device)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def matmul_ceiling(device: torch.device, n: int = 2048, reps: int = 5, dtype: torch.dtype = torch.float32) -> float:
    """fp32 GFLOP/s of one large n×n×n matmul (2n³ FLOP), the median of `reps` after a warm-up."""
    return matmul_speed(device, 0.0, n, reps, dtype)[0]


def matmul_speed(
    device: torch.device, seconds: float = 2.0, n: int = 1024, reps: int = 3, dtype: torch.dtype = torch.float32
) -> tuple[float, int]:
    """fp32 GFLOP/s of n×n×n matmuls repeated for about `seconds`, at least `reps` times (median), and how
    many ran."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    a @ b
    sync(device)
    times: list[float] = []
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end or len(times) < reps:
        t = time.perf_counter()
        a @ b
        sync(device)
        times.append(time.perf_counter() - t)
    return 2 * n**3 / statistics.median(times) / 1e9, len(times)


# --- FLOP counts ----------------------------------------------------------------------------------


def matmul_params(cfg: RunConfig) -> int:
    """Weights of the model's matmuls (first layer, hidden layers, readout); biases and E excluded."""
    d, L, p = cfg.model.d_embed, cfg.data.seq_len, cfg.data.p
    hidden = cfg.d_hidden
    n_in = {"mlp_embed": L * d, "mlp_onehot": L * cfg.data.vocab_size}.get(cfg.model.kind, L)
    return n_in * hidden + (cfg.model.n_hidden - 1) * hidden * hidden + hidden * p


def nominal_flops(cfg: RunConfig, batch: int | None = None) -> float:
    """6·B·(params in the matmuls) per training step: 2 forward + 4 backward FLOP per weight and example."""
    return 6.0 * (batch or cfg.train.batch_size) * matmul_params(cfg)


def engine_flops(cfg: RunConfig) -> float:
    """The FLOP the engine actually spends per step, with the first layer the engine picks.

    Above B = V the first layer runs on the tables T_l = E W_lᵀ: building T, ∂E and ∂W costs
    3 · 2·L·V·d·H instead of 6·B·L·d·H (engine/models/first_layer.py), and the gather and index_add of
    B·L rows of H are counted as B·L·H adds each way. At B ≤ V it is the plain Linear (`tables_pay`).
    The one-hot MLP gathers B·L columns of W: B·L·H adds each way, no matmul.
    """
    B, d, L, V = cfg.train.batch_size, cfg.model.d_embed, cfg.data.seq_len, cfg.data.vocab_size
    H = cfg.d_hidden
    if cfg.model.kind == "mlp_onehot":
        return 2.0 * B * L * H + 6.0 * B * (matmul_params(cfg) - L * V * H)
    if not uses_tables(cfg):
        return nominal_flops(cfg)
    first = 6.0 * L * V * d * H + 2.0 * B * L * H
    return first + 6.0 * B * (matmul_params(cfg) - L * d * H)


def uses_tables(cfg: RunConfig) -> bool:
    """Whether the engine's first layer runs on the tables E·W_lᵀ for this config (`tables_pay`)."""
    device = str(resolve_device(cfg.train.device).type)
    return cfg.model.kind == "mlp_embed" and tables_pay(cfg.train.batch_size, cfg.data.vocab_size, device)


# --- the arms -------------------------------------------------------------------------------------


class PeerMLP(nn.Module):
    """eq. 2 as the anchor repos write it: Embedding, flatten, Linear, ReLU, Linear."""

    def __init__(self, cfg: RunConfig) -> None:
        super().__init__()
        d, L = cfg.model.d_embed, cfg.data.seq_len
        hidden = cfg.d_hidden
        self.embed = nn.Embedding(cfg.data.vocab_size, d)
        self.net = nn.Sequential(nn.Linear(L * d, hidden), nn.ReLU(), nn.Linear(hidden, cfg.data.p))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.net(self.embed(x).flatten(1))
        return logits


def peer_loop(cfg: RunConfig, flush_denormal: bool = False) -> Stepper:
    """A plain loop: DataLoader with shuffle, torch.optim.Adam with its defaults, loss.item() logged every step.

    PyTorch leaves subnormal floats on by default (`flush_denormal=False`); the flag exists to show
    that flushing them is what keeps a long run's speed (`grok bench`, section 4).
    """
    device = resolve_device(cfg.train.device)
    data = load_dataset(cfg.data, cfg.train.seed)  # the training split as CPU tensors, as a peer script holds it
    torch.manual_seed(cfg.train.seed)
    model = PeerMLP(cfg).to(device)
    o = cfg.optim
    opt = torch.optim.Adam(model.parameters(), lr=o.lr, betas=o.betas, eps=o.eps, weight_decay=o.weight_decay)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(data.x_train, data.y_train), batch_size=cfg.train.batch_size, shuffle=True
    )

    def batches() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        while True:
            yield from loader

    it = batches()
    losses: list[float] = []

    def run(n: int) -> None:
        torch.set_flush_denormal(flush_denormal)
        for _ in range(n):
            xb, yb = next(it)
            xb, yb = xb.to(device), yb.to(device)
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sync(device)

    return run


def engine_loop(cfg: RunConfig) -> Stepper:
    """The engine as a run uses it: `Trainer` events, evaluations at the config's eval_every included."""
    cfg = apply_overrides(cfg, {"train.max_steps": 10**9})
    trainer = Trainer(cfg)
    it = trainer.events()
    next(it)  # RunStarted

    def run(n: int) -> None:
        if n % PROGRESS_EVERY:
            raise ValueError(f"engine steps come in multiples of {PROGRESS_EVERY} (got {n})")
        torch.set_flush_denormal(True)  # what Trainer.__init__ sets; re-set because arms alternate
        target = trainer.step + n
        for ev in it:
            if isinstance(ev, StepsTaken) and ev.step >= target:
                break
        sync(trainer.device)

    return run


@dataclass
class ArmResult:
    """Steps/s of each chunk an arm trained, in order."""

    name: str
    steps: int
    seconds: list[float]

    @property
    def steps_per_s(self) -> float:
        return self.steps / statistics.median(self.seconds)


def interleave(arms: dict[str, Stepper], steps: int, reps: int, warmup: int = 20) -> dict[str, ArmResult]:
    """Train each arm `steps` steps per repetition, alternating arms; the first `warmup` steps are untimed."""
    for run in arms.values():
        run(warmup)
    return {name: ArmResult(name, steps, secs) for name, secs in sustained(arms, steps * reps, steps).items()}


def sustained(arms: dict[str, Stepper], total: int = 6000, chunk: int = 100) -> dict[str, list[float]]:
    """Seconds per `chunk` steps of each arm over one long run, chunks alternating between arms."""
    out: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(total // chunk):
        for name, run in arms.items():
            t = time.perf_counter()
            run(chunk)
            out[name].append(time.perf_counter() - t)
    return out


def window_rate(seconds: list[float], chunk: int, lo: int, hi: int) -> float:
    """Steps/s over steps [lo, hi) from per-chunk seconds."""
    part = seconds[lo // chunk : hi // chunk]
    return len(part) * chunk / sum(part) if part else float("nan")


def many_loop(cfg: RunConfig, members: int) -> Stepper:
    """`members` seeds of one config trained as one batched model (engine/train/many.py)."""
    from engine.train.many import ManyTrainer

    cfgs = [apply_overrides(cfg, {"train.seed": s, "train.max_steps": 10**9}) for s in range(members)]
    trainer = ManyTrainer(cfgs)
    it = trainer.member_events()

    def run(n: int) -> None:
        torch.set_flush_denormal(True)
        target = trainer.step + n
        for i, ev in it:
            if i == 0 and isinstance(ev, StepsTaken) and ev.step >= target:
                break
        sync(trainer.device)

    return run
