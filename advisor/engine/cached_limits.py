"""The engine's caches, by value, in one place: each resource's limit, and the cache the
what-if cliffs (whatif.py) are kept in.

A batch, a lint run or a what-if search asks one architecture about the same
register counts and shared-memory sizes over and over. Each limit, and each cliff, is a pure
function of the Arch (a record hashable by value) and a few numbers, so it is
cached by those values with functools' LRU eviction; `limits` stays the
header's plain arithmetic, and nothing is keyed by an object's identity."""

from __future__ import annotations

from functools import lru_cache

from ...specs.records import Arch
from .limits import registers_limit, shared_mem_limit, warps_limit

_CACHE_ENTRIES = 1 << 16
# A cliff depends on the varied resource's inputs and the other limits' minimum, not on the
# whole kernel: a lint run's thousands of distinct kernels share a few hundred of them.
_CLIFF_ENTRIES = 1 << 14


def cached_cliff(function):
    """A what-if answer cached by its arguments (the Arch and a few numbers)."""
    return lru_cache(maxsize=_CLIFF_ENTRIES)(function)


@lru_cache(maxsize=_CACHE_ENTRIES)
def shape_limits(arch: Arch, registers: int, block_size: int) -> tuple[int, int, int]:
    """(blocks the warps allow, blocks the registers allow, registers allocated per block)."""
    regs, allocated = registers_limit(arch, registers, block_size, arch.warp_allocation_granularity)
    if regs and arch.register_launch_check_granularity:
        # GP100 (6.0): a kernel that cannot run on GP10x is refused on all Pascal parts.
        check, _ = registers_limit(arch, registers, block_size, arch.register_launch_check_granularity)
        if check == 0:
            regs = 0
    return warps_limit(arch, block_size), regs, allocated


@lru_cache(maxsize=_CACHE_ENTRIES)
def shared_mem_limits(arch: Arch, static: int, dynamic: int, carveout: int, opt_in: bool) -> tuple[int, int, int | None]:
    """cudaOccMaxBlocksPerSMSmemLimit: (blocks, bytes allocated per block, per-SM config)."""
    return shared_mem_limit(arch, static, dynamic, carveout, opt_in)
