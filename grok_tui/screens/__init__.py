"""Textual screens of the lab app."""
