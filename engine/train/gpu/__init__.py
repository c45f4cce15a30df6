"""The training step on a GPU: CUDA graphs, their recorder, and the host reads a step makes."""
