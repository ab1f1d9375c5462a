"""tuneadvise specs."""
