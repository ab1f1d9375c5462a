"""tuneadvise cli."""
