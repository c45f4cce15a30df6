"""Issue 13's faults, each reproduced as it was found and held closed.

- test_security.py: S1 (a crafted checkpoint runs no code: grok run --resume, Run.from_checkpoint, a sweep
  worker; checkpoints hold only containers, tensors and numbers), S2 (CSV injection), S3 (--preset
  takes names), S4 (control characters from a run directory: show, export, error lines).
- test_integrity.py: D1 (the run lock), D2 (a torn last row), D3 (config.json changed under a run),
  D5 (a full disk: a row, the kernel's ENOSPC, the checkpoint), F12 (a killed run is dead, with its
  progress from the rows), F13 (bit-exact resume between evaluations), durability (fsync around the
  checkpoint's rename).
- test_errors.py: F1-F9, grok report and a NaN generalized_step, an empty test set.
- Elsewhere, beside the code they test: D4 (sweep resume after SIGKILL) in
  tests/cli/test_sweep_signals.py, F11 (grok-tui --compare on a D3 run) and S4 in the TUI in
  tests/tui/test_instruments.py; the guard that nothing outlives its test in tests/conftest.py.
"""
