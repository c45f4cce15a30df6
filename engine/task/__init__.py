"""The task: modular-arithmetic data, the train/test splits, batch samplers and the metrics on tokens."""
