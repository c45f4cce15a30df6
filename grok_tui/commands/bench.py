"""`grok bench`: this machine's matmul ceiling, the peer loop, the engine, sustained speed and many seeds."""

from __future__ import annotations

from typing import Annotated

import typer

from grok_tui import options as o
from grok_tui.errors import user_errors

OVERHEAD_NOTES = (
    "probes: docs/PROBES.md (all probes at default cadences vs off)",
    "TUI:    docs/TUI.md (a live TUI vs a headless run)",
)


app = typer.Typer()  # `grok bench`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def bench(
    device: o.DeviceName = "auto",
    many: Annotated[
        str | None,
        typer.Option("--many", help="Batch sizes N of section 6, e.g. 1,8 (default 1,8,32; 1,8,32,128 on a GPU)."),
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Fewer repetitions; skip the 6k-step run.")] = False,
    threads: Annotated[int, typer.Option("--threads", help="torch threads; 0 = auto (grok doctor).")] = 0,
) -> None:
    """Measure training throughput on this machine (p=97, d=128, batch 512, mul)."""
    from engine.config import ConfigError

    try:
        sizes = tuple(int(n) for n in many.split(",")) if many else None
    except ValueError:
        raise ConfigError(f"--many: comma-separated integers, e.g. 1,8,32 (got {many!r})") from None
    if sizes is not None and (not sizes or min(sizes) < 1):
        raise ConfigError(f"--many: sizes must be >= 1 (got {many!r})")
    try:
        run_bench(device, quick, threads, sizes)
    except (ValueError, RuntimeError) as e:  # an unavailable or unknown device
        why = str(e).splitlines()[0]
        if why.startswith("Expected one of"):  # torch lists its twenty device types
            why = "not a device type torch knows (cpu, cuda, mps, xpu, ...)"
        raise ConfigError(f"--device {device}: {why}") from None


def run_bench(device: str, quick: bool, threads: int, many_sizes: tuple[int, ...] | None = None) -> None:
    import torch

    from engine.train import bench as B
    from engine.train.trainer import resolve_device

    if threads:
        torch.set_num_threads(threads)
    dev = resolve_device(device)
    cfg = B.bench_config("random_mul", str(dev), threads, **{"optim.lr": 1e-3})
    reps, steps = (3, 30) if quick else (7, 50)
    from grok_tui.commands.width import wrap

    def echo(text: str) -> None:  # prose folded to the terminal's width (the tables fit 80 columns)
        typer.echo(wrap(text))

    echo(
        f"grok bench: random_mul (p=97, d=128, batch 512), device {dev}, threads {torch.get_num_threads()}, "
        f"{reps} interleaved repetitions of {steps} steps, medians"
    )
    ceiling = B.matmul_ceiling(dev)
    nominal, actual = B.nominal_flops(cfg), B.engine_flops(cfg)
    echo(f"\n{'':<34}{'steps/s':>9}{'GFLOP/s':>9}{'of ceiling':>12}")
    echo(f"{'1 fp32 matmul ceiling (2048³)':<34}{'':>9}{ceiling:>9.1f}{'100%':>12}")
    res = B.interleave({"peer": B.peer_loop(cfg), "engine": B.engine_loop(cfg)}, steps, reps)
    peer, eng = res["peer"].steps_per_s, res["engine"].steps_per_s
    for name, rate in (("2 peer loop (DataLoader, Adam)", peer), ("3 engine (evals every 100 incl.)", eng)):
        gflops = rate * nominal / 1e9
        echo(f"{name:<34}{rate:>9.1f}{gflops:>9.1f}{gflops / ceiling:>12.0%}")
    echo(f"{'  engine, FLOP actually spent':<34}{'':>9}{eng * actual / 1e9:>9.1f}{eng * actual / 1e9 / ceiling:>12.0%}")
    spent = (
        f"the engine's first layer runs on E·W_lᵀ tables: {actual / 1e6:.0f} MFLOP/step"
        if B.uses_tables(cfg)
        else "the engine's first layer is the plain Linear: the nominal FLOP"
    )
    echo(
        f"  engine / peer = {eng / peer:.2f}x   (nominal = 6·B·matmul params = {nominal / 1e6:.0f} MFLOP/step; {spent})"
    )
    echo("\n4 sustained, random_mul at lr 1e-3")
    if quick:
        echo("  skipped with --quick (6,000 steps per arm); `grok bench` without --quick runs it")
    else:
        secs = B.sustained({"plain": B.peer_loop(cfg), "engine": B.engine_loop(cfg)}, 6000, 100)
        for name, s in secs.items():
            early, late = B.window_rate(s, 100, 0, 1000), B.window_rate(s, 100, 2000, 6000)
            echo(f"  {name:<8} steps 0-1k {early:7.1f}/s   2k-6k {late:7.1f}/s   ratio {late / early:.2f}")
    echo("\n5 probe and TUI overhead")
    for line in OVERHEAD_NOTES:
        echo(f"  {line}")
    echo("\n6 many seeds as one batched model (model-steps/s)")
    sizes = many_sizes or ((1, 8, 32) if dev.type == "cpu" else (1, 8, 32, 128))
    many = B.interleave({str(n): B.many_loop(cfg, n) for n in sizes}, 10 if quick else 20, max(reps // 2, 2), 10)
    base = many[str(sizes[0])].steps_per_s * sizes[0]
    for n in sizes:
        r = many[str(n)].steps_per_s * n
        echo(
            f"  N = {n:<4} {r:9.1f} model-steps/s   {r / base:5.1f}x of N = {sizes[0]}   "
            f"(goal on a GPU: {0.7 * n / sizes[0]:.1f}x)"
        )
