"""The training step on a GPU: CUDA graphs (recorded with engine/probes/recorder.py) and the host reads a step makes."""
