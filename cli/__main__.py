"""`python -m tuneadvise.cli`: the same as the `tuneadvise` command."""

from tuneadvise.cli.main import main

main()
