"""The `grok` CLI as a user runs it: tests/conftest.py's `grok` (in this process unless `process=True`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import grok as grok

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture
def tiny_toml() -> str:
    return str(DATA / "tiny.toml")
