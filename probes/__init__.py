"""tuneadvise probes."""
