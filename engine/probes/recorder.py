"""Recording a step as a CUDA graph, and the same bookkeeping without a GPU: what the training step
(engine/train/gpu/cuda_graph.py) and the Hessian probe's power iteration (engine/probes/hessian.py) both record with.
Torch only, in the probes' layer so that the probe never imports train."""

from __future__ import annotations

from collections.abc import Callable

import torch

Recorded = Callable[[], None]
Recorder = Callable[[Callable[[], None]], Recorded]


def cuda_recorder(step: Callable[[], None]) -> Recorded:
    """Record `step` into a CUDA graph (nothing runs now) and return its replay."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):  # torch's whole-step recipe (CUDA graphs, "whole network capture")
        step()
    return graph.replay


def eager_recorder(step: Callable[[], None]) -> Recorded:
    """The bookkeeping of a recording without the GPU: each replay runs `step` again (tests on the CPU)."""
    return step
