"""Suite-wide settings: the tests never write into the user's home, and
hypothesis runs more examples in CI than on a developer's machine."""

import os
import tempfile

from hypothesis import HealthCheck, settings

# The spec cache (and anything else keyed to XDG_CACHE_HOME) goes to a folder of the run's own,
# for this process and every command the tests start.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tuneadvise-tests-cache-")

# Tests that leave max_examples to the profile (the hostile-input suite) run hypothesis's
# 100 locally and a few thousand per target in CI, about two minutes in all;
# HYPOTHESIS_PROFILE picks one by name.
settings.register_profile("ci", deadline=None, max_examples=2500, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
