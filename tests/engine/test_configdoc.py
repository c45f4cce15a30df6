"""docs/CONFIG.md documents every config key and is up to date with engine/config/fields.py."""

from __future__ import annotations

from pathlib import Path

from engine.config import all_keys
from engine.config.doc import markdown


def test_every_key_is_documented() -> None:
    md = markdown()
    for key in all_keys():
        assert f"`{key}`" in md, key


def test_config_doc_is_current() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "CONFIG.md"
    assert doc.read_text() == markdown(), "regenerate: python -m engine.config.doc > docs/CONFIG.md"
