"""Records: runs, groups and paper runs as the faces read them, and their export."""
