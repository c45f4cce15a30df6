"""grok-tui's engine: data, models, optimizers, probes, the training loop and run logs; no UI."""
