"""The run directory: the only code that reads or writes a run's or a group's files."""
