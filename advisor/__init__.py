"""tuneadvise.advisor: the library behind the CLI.

    >>> from tuneadvise.advisor import analyze
    >>> result = analyze("volta", registers=64, block_size=256, shared_mem="12K")
    >>> result.active_blocks_per_sm, result.limiters
    (4, ['registers'])

Everything here works without a GPU and without the command line.
"""

from __future__ import annotations

from ..specs.resolve import resolve_arch
from .engine.occupancy import DynamicSharedMemBudget, LaunchError, Occupancy, occupancy
from .inputs import InputError
from .launch import LaunchConfig

MAX_BLOCKS_ASKED = 1024  # blocks per SM a budget may ask for: far above any architecture's (32)

__all__ = ["DynamicSharedMemBudget", "LaunchConfig", "LaunchError", "Occupancy", "InputError", "analyze",
           "max_dynamic_smem", "occupancy"]


def analyze(arch, cuda: str | None = None, **values) -> Occupancy:
    """Occupancy from user-style values: `arch` by any accepted name (or an Arch), the rest
    any LaunchConfig keys (registers, block_size, shared_mem, ...), sizes as 12288 or '12K';
    `cuda`: the cuda_occupancy.h release to follow (default: the newest the engine is exact to)."""
    return occupancy(resolve_arch(arch, cuda), LaunchConfig.from_mapping(values))


def max_dynamic_smem(arch, blocks_per_sm: int, cuda: str | None = None, **values) -> DynamicSharedMemBudget:
    """The most dynamic shared memory per block that keeps `blocks_per_sm` blocks per SM, as
    cudaOccAvailableDynamicSMemPerBlock computes it, with the limiter that binds:

        >>> budget = max_dynamic_smem("h100-sxm", 2, registers=32, block_size=256, opt_in=True)
        >>> budget.max_dynamic_shared_mem, budget.limiter
        (115712, 'shared_memory')
    """
    from .engine.occupancy import max_dynamic_shared_mem
    from .inputs import parse_int

    blocks = parse_int(blocks_per_sm, "blocks_per_sm", 1, MAX_BLOCKS_ASKED)
    return max_dynamic_shared_mem(resolve_arch(arch, cuda), LaunchConfig.from_mapping(values), blocks)
