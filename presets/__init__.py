"""Preset TOML files, shipped as package data; see engine/config/presets.py."""
