"""`python -m grok_tui` is `grok`."""

from grok_tui.cli import main

main()
