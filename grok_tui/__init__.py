"""grok-tui's faces: the `grok` CLI and the Textual lab app."""
