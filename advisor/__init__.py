"""tuneadvise.advisor: the library behind the CLI.

    >>> from tuneadvise.advisor import analyze
    >>> result = analyze("volta", registers=64, block_size=256, shared_mem="12K")
    >>> result.active_blocks_per_sm, result.limiters
    (4, ['registers'])

Everything here works without a GPU and without the command line.
"""

from __future__ import annotations

from tuneadvise.advisor.engine.occupancy import Kernel, LaunchError, Occupancy, occupancy
from tuneadvise.advisor.inputs import InputError, make_kernel

__all__ = ["Kernel", "LaunchError", "Occupancy", "InputError", "analyze", "occupancy", "make_kernel"]


def analyze(arch, registers, block_size, shared_mem=0, dynamic_shared_mem=0, carveout="default",
            opt_in=False, barriers=1, max_threads_per_block=None) -> Occupancy:
    """Occupancy from user-style values: arch by any accepted name, sizes as 12288 or '12K'."""
    from tuneadvise.specs.catalog import shipped_catalog

    resolved = arch if hasattr(arch, "max_warps_per_sm") else shipped_catalog().resolve(arch).arch
    kernel, _ = make_kernel(registers=registers, block_size=block_size, shared_mem=shared_mem,
                            dynamic_shared_mem=dynamic_shared_mem, carveout=carveout, opt_in=opt_in,
                            barriers=barriers, max_threads_per_block=max_threads_per_block)
    return occupancy(resolved, kernel)
