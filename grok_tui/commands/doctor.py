"""`grok doctor`: versions, the device `auto` picks, a 2-second matmul check and where runs go."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from importlib import metadata
from pathlib import Path
from typing import Annotated

import typer

from grok_tui import options as o
from grok_tui.commands.width import echo
from grok_tui.errors import user_errors


def _version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def _runs_line(out: Path) -> str:
    from engine.rundir import is_group, is_run_dir

    where = out.resolve()
    if not out.exists():
        parent = next((p for p in where.parents if p.exists()), None)
        ok = parent is not None and os.access(parent, os.W_OK)
        return f"{where} (not created yet; {'writable' if ok else 'NOT writable'})"
    kids = [c for c in out.iterdir() if c.is_dir()] if out.is_dir() else []
    n_runs = sum(is_run_dir(c) for c in kids)
    n_groups = sum(is_group(c) for c in kids)
    ok = os.access(out, os.W_OK)
    runs = f"{n_runs} run{'' if n_runs == 1 else 's'}, {n_groups} sweep group{'' if n_groups == 1 else 's'}"
    return f"{where} ({runs}; {'writable' if ok else 'NOT writable'})"


app = typer.Typer()  # `grok doctor`, added to the `grok` app by grok_tui/cli.py


@app.command()
@user_errors
def doctor(
    device: o.DeviceName = "auto",
    out: Annotated[str, typer.Option("--out", help="Where runs go (the --out of grok run).")] = "runs",
    seconds: Annotated[float, typer.Option("--seconds", help="Length of the matmul check.")] = 2.0,
) -> None:
    """Check this machine: Python, torch and CUDA versions, the device `auto` picks, matmul speed, runs folder."""
    from engine.config import ConfigError

    echo(f"grok-tui  {_version('grok-tui')}")
    echo(f"python    {platform.python_version()} ({sys.executable})")
    echo(f"platform  {platform.system()} {platform.machine()}, {os.cpu_count()} CPU cores")
    try:
        import torch
    except ImportError:
        raise ConfigError("torch is not installed in this environment; see the README's install section") from None
    from engine.train import bench as B
    from engine.train.trainer import resolve_device

    cuda = torch.version.cuda
    build = f"CUDA {cuda} build" if cuda else "CPU build"
    echo(f"torch     {torch.__version__} ({build}), {torch.get_num_threads()} threads")
    from engine.train.threads import choose_threads

    auto = choose_threads(0)
    echo(f"threads   train.threads = 0 (auto) picks {auto.threads}: {auto.reason}")
    if torch.cuda.is_available():
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        echo(f"CUDA      available: {torch.cuda.device_count()} device(s): {names}")
    elif cuda:
        echo("CUDA      NOT available: this torch is a CUDA build but sees no GPU (driver? CUDA_VISIBLE_DEVICES?)")
    elif shutil.which("nvidia-smi"):
        echo("CUDA      NOT available: this machine has an NVIDIA driver but torch is a CPU build;")
        echo("          reinstall torch with CUDA (README, 'Install'), after `make clean`")
    else:
        echo("CUDA      not available (CPU build of torch, no NVIDIA driver found)")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        echo("MPS       available")
    echo(
        f"deps      textual {_version('textual')}, plotext {_version('plotext')}, typer {_version('typer')}, "
        f"numpy {_version('numpy')}"
    )
    try:
        dev = resolve_device(device)
    except (ValueError, RuntimeError) as e:
        raise ConfigError(f"--device {device}: {str(e).splitlines()[0]}") from None
    echo(f"device    {device} -> {dev}")
    gflops, n = B.matmul_speed(dev, seconds)
    echo(f"matmul    fp32 1024³ on {dev}: {gflops:,.1f} GFLOP/s (median of {n} in ~{seconds:g} s)")
    echo(f"runs      {_runs_line(Path(out))}")
