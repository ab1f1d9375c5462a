"""Suite-wide settings: the tests never write into the user's home, and
hypothesis runs more examples in CI than on a developer's machine."""

import os
import tempfile

from hypothesis import settings

# The spec cache (and anything else keyed to XDG_CACHE_HOME) goes to a folder of the run's own,
# for this process and every command the tests start.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tuneadvise-tests-cache-")

settings.register_profile("ci", deadline=None, max_examples=200)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
