"""Paper figures drawn with matplotlib (the optional `figures` extra): runs, sweep groups, one per claim."""
