"""Textual widgets of the lab app, one per file."""
