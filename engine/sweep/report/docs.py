"""`python -m engine.sweep.report.docs [--check]`, the command the pages name: engine/claims/docs.py's `main`."""

from __future__ import annotations

import sys

from engine.claims.docs import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
