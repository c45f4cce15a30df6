"""Subcommands of `grok`, one module each; every module has `register(app)`."""
