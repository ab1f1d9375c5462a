"""tuneadvise.advisor: the library behind the CLI.

    >>> from tuneadvise.advisor import analyze
    >>> result = analyze("volta", registers=64, block_size=256, shared_mem="12K")
    >>> result.active_blocks_per_sm, result.limiters
    (4, ['registers'])

Everything here works without a GPU and without the command line.
"""

from __future__ import annotations

from tuneadvise.advisor.engine.occupancy import LaunchError, Occupancy, occupancy
from tuneadvise.advisor.inputs import InputError
from tuneadvise.advisor.launch import LaunchConfig

__all__ = ["LaunchConfig", "LaunchError", "Occupancy", "InputError", "analyze", "occupancy"]


def analyze(arch, **values) -> Occupancy:
    """Occupancy from user-style values: `arch` by any accepted name (or an Arch), the rest
    any LaunchConfig keys (registers, block_size, shared_mem, ...), sizes as 12288 or '12K'."""
    from tuneadvise.specs.catalog import shipped_catalog

    resolved = arch if hasattr(arch, "max_warps_per_sm") else shipped_catalog().resolve(arch).arch
    return occupancy(resolved, LaunchConfig.from_mapping(values))
