"""The test suite. OpenMP reads its environment once, when torch loads it: set it before any import of torch."""

from __future__ import annotations

import os

# Tests train tiny models: one thread avoids OpenMP spin-waits when test processes share the cores.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Tests that ask torch for two threads (tests/engine/conftest.py) must not spin either: on two busy
# cores a spinning OpenMP barrier made a 300-step golden run take 115 s instead of 12 s.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
