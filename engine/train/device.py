"""The device a run trains on (`train.device`), and TF32 for its float32 matmuls (`train.tf32`)."""

from __future__ import annotations

import torch


def resolve_device(name: str) -> torch.device:
    """auto = cuda, then mps, then cpu."""
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"train.device: {name} requested but CUDA is not available")
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError("train.device: mps requested but MPS is not available")
    return dev


def apply_tf32(on: bool, device: torch.device) -> str:
    """Set train.tf32 for this process's CUDA float32 matmuls; what it means on `device`, for summary.json.

    Off is set too, so a run after a TF32 one in the same process is fp32 again. The CPU has no TF32:
    there the flag changes nothing (not even torch's CPU matmul precision) and the summary says so.
    """
    if device.type != "cuda":
        return "off: TF32 is a CUDA tensor-core format; on the CPU float32 matmuls stay float32" if on else "off"
    torch.backends.cuda.matmul.allow_tf32 = on  # torch.get_float32_matmul_precision(): "high" on, "highest" off
    return "on" if on else "off"
