"""Preset TOML files, shipped as package data; see engine/presets.py."""
