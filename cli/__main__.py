"""`python -m tuneadvise.cli`: the same as the `tuneadvise` command."""

from .main import main

main()
