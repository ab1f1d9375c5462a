"""The exact theoretical-occupancy engine.

Each private helper mirrors one function of NVIDIA's reference implementation,
cuda_occupancy.h (CUDA 12.9), and is named after it. The arithmetic is the
header's; the constants the header hard-codes per compute capability come from
the spec (`tuneadvise.specs`), so Fermi, which the header does not cover, runs
through the same code with its own allocation units. The differential test in
tests/test_reference_header.py holds the two equal over a seeded sweep.

What the engine adds on top of the header: it names each launch failure (the
header returns a silent 0), and it enforces limits the header leaves to the
compiler or the launch (per-thread register cap of 2.x/3.0, static shared
memory over 48 KB, __launch_bounds__ smaller than the block).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from tuneadvise.specs.catalog import Arch

if TYPE_CHECKING:  # the engine reads a LaunchConfig's resource fields by name and imports nothing of it
    from tuneadvise.advisor.launch import LaunchConfig

INT_MAX = 2**31 - 1  # the header's "unlimited"

LIMITERS = ("warps", "registers", "shared_memory", "blocks", "barriers")

# Carveout preferences as cuda_occupancy.h encodes them (cudaOccCarveoutConfig).
CARVEOUT_DEFAULT = -1
CARVEOUT_MAX_L1 = 0
CARVEOUT_MAX_SHARED = 100
CARVEOUT_NAMES = {"default": CARVEOUT_DEFAULT, "max-l1": CARVEOUT_MAX_L1, "max-shared": CARVEOUT_MAX_SHARED}


class LaunchError(NamedTuple):
    code: str  # stable identifier, e.g. "registers-per-thread"
    field: str  # the input that causes it
    message: str


class Occupancy(NamedTuple):
    arch: Arch
    kernel: LaunchConfig
    active_blocks_per_sm: int
    warps_per_block: int
    block_limits: dict  # limiter -> blocks per SM it allows (None: no limit)
    limiters: list
    allocated_registers_per_block: int
    allocated_shared_mem_per_block: int
    shared_mem_config: int | None  # per-SM shared memory the driver would configure
    errors: list  # of LaunchError; empty when it launches
    notes: list  # of str

    @property
    def launchable(self) -> bool:
        return not self.errors

    @property
    def active_warps_per_sm(self) -> int:
        return self.active_blocks_per_sm * self.warps_per_block

    @property
    def max_warps_per_sm(self) -> int:
        return self.arch.max_warps_per_sm

    @property
    def occupancy(self) -> float:
        return self.active_warps_per_sm / self.arch.max_warps_per_sm


# --------------------------------------------------------------------------
# Helpers mirroring cuda_occupancy.h
# --------------------------------------------------------------------------

def _div_round_up(x: int, y: int) -> int:
    return (x + (y - 1)) // y


def _round_up(x: int, y: int) -> int:
    return y * _div_round_up(x, y)


def _header_max_regs_per_thread(arch: Arch) -> int:
    """cudaOccRegAllocationMaxPerThread: 255 up to 6.x, 256 from 7.0."""
    return arch.header_max_registers_per_thread


def align_up_shared_mem(arch: Arch, size: int) -> int | None:
    """cudaOccAlignUpShmemSizeVoltaPlus: the smallest supported carveout >= size (None if none)."""
    for config in arch.shared_mem_configs:
        if size <= config:
            return config
    return None


def shared_mem_preference(arch: Arch, carveout: int) -> int:
    """cudaOccSMemPerMultiprocessor: the per-SM shared memory the carveout asks for."""
    if arch.shared_mem_model == "carveout":  # cudaOccSMemPreferenceVoltaPlus
        if carveout == CARVEOUT_DEFAULT:
            size = arch.shared_mem_per_sm
        else:
            size = (carveout * arch.shared_mem_per_sm) // 100
        aligned = align_up_shared_mem(arch, size)
        return arch.shared_mem_per_sm if aligned is None else aligned
    if arch.shared_mem_model == "cache-config":  # cudaOccSMemPreference, Kepler/Fermi branch
        # Only the named preferences map to cudaFuncSetCacheConfig; a percentage is ignored there.
        if carveout == CARVEOUT_MAX_L1:
            return arch.shared_mem_configs[0]
        return arch.shared_mem_configs[-1]
    return arch.shared_mem_per_sm  # Maxwell/Pascal: dedicated shared memory


def shared_mem_ceiling(arch: Arch, opt_in: bool) -> int:
    """The most shared memory (static + dynamic) one block may ask for: the opt-in
    limit once the kernel opted in (7.0 and later), else the default."""
    return arch.shared_mem_per_block_optin if (opt_in and arch.shared_mem_opt_in) else arch.shared_mem_per_block


def _warps_limit(arch: Arch, block_size: int) -> int:
    """cudaOccMaxBlocksPerSMWarpsLimit (partitioned global caching off)."""
    if block_size > arch.max_threads_per_block:
        return 0
    return arch.max_warps_per_sm // _div_round_up(block_size, arch.warp_size)


def _register_allocation(arch: Arch, registers: int, block_size: int, granularity: int) -> tuple[int, int, int, int]:
    """(warps, registers per warp, per block, per block as the hardware's launch check assumes it)."""
    warps = _div_round_up(block_size, arch.warp_size)
    per_warp = _round_up(registers * arch.warp_size, arch.register_allocation_unit)
    # The hardware's launch check assumes registers go to all sub-partitions at once.
    return warps, per_warp, per_warp * warps, per_warp * _round_up(warps, granularity)


def _registers_limit(arch: Arch, registers: int, block_size: int, granularity: int) -> tuple[int, int]:
    """cudaOccMaxBlocksPerSMRegsLimit: (blocks, registers allocated per block)."""
    warps, per_warp, per_block, assumed_per_block = _register_allocation(arch, registers, block_size, granularity)
    if (arch.registers_per_block < assumed_per_block
            or arch.registers_per_block < per_block
            or registers > _header_max_regs_per_thread(arch)):
        return 0, per_block
    if per_warp == 0:
        return INT_MAX, per_block
    warps_per_partition = (arch.registers_per_sm // granularity) // per_warp
    return (warps_per_partition * granularity) // warps, per_block


def _shared_mem_limit(arch: Arch, static_shared_mem: int, dynamic_shared_mem: int, carveout: int,
                      opt_in: bool) -> tuple[int, int, int | None]:
    """cudaOccMaxBlocksPerSMSmemLimit: (blocks, bytes allocated per block, per-SM config)."""
    unit = arch.shared_mem_allocation_unit
    preference = shared_mem_preference(arch, carveout)
    static = static_shared_mem + arch.reserved_shared_mem_per_block
    total = static + dynamic_shared_mem
    allocated = _round_up(total, unit)

    if opt_in and arch.shared_mem_opt_in:
        # The kernel raised cudaFuncAttributeMaxDynamicSharedMemorySize to the largest value allowed.
        max_dynamic = max(arch.shared_mem_per_block_optin - static_shared_mem, 0)
        dynamic_exceeded = dynamic_shared_mem > max_dynamic
        limit = (arch.shared_mem_per_block_optin if static + max_dynamic > arch.shared_mem_per_block
                 else arch.shared_mem_per_block)
    else:
        dynamic_exceeded = False
        limit = arch.shared_mem_per_block
    if arch.reserved_shared_mem_in_block_limit:  # cudaOccSMemPerBlock: the driver reserves memory per block
        limit += arch.reserved_shared_mem_per_block

    if dynamic_exceeded or allocated > limit:
        return 0, allocated, None
    if preference >= allocated:
        config = preference
    elif arch.shared_mem_model == "carveout":
        config = align_up_shared_mem(arch, allocated)
    else:
        config = arch.shared_mem_per_sm
    blocks = config // allocated if allocated > 0 else INT_MAX
    return blocks, allocated, config


def _barriers_limit(arch: Arch, barriers: int) -> int:
    """cudaOccMaxBlocksPerSMBlockBarrierLimit (9.0 and later)."""
    available = arch.max_blocks_per_sm * arch.barriers_per_block_slot
    return available // barriers if barriers else INT_MAX


# --------------------------------------------------------------------------
# Each resource's limit, cached by value
# --------------------------------------------------------------------------
# A batch, a lint run or a what-if search asks one architecture about the same
# register counts and shared-memory sizes over and over. Each resource's limit is
# a pure function of the Arch (a hashable record) and a few numbers, so it is
# cached by those values here, in one place, with functools' LRU eviction; the
# functions above stay the header's plain arithmetic.

_CACHE_ENTRIES = 1 << 16


@lru_cache(maxsize=_CACHE_ENTRIES)
def shape_limits(arch: Arch, registers: int, block_size: int) -> tuple[int, int, int]:
    """(blocks the warps allow, blocks the registers allow, registers allocated per block)."""
    regs, allocated = _registers_limit(arch, registers, block_size, arch.warp_allocation_granularity)
    if regs and arch.register_launch_check_granularity:
        # GP100 (6.0): a kernel that cannot run on GP10x is refused on all Pascal parts.
        check, _ = _registers_limit(arch, registers, block_size, arch.register_launch_check_granularity)
        if check == 0:
            regs = 0
    return _warps_limit(arch, block_size), regs, allocated


@lru_cache(maxsize=4096)
def register_limits(arch: Arch, block_size: int) -> tuple[int, ...]:
    """Blocks the registers allow for each count from 0 to the architecture's maximum per
    thread, at this block size: a what-if search reads a register staircase from it."""
    return tuple(shape_limits(arch, registers, block_size)[1] for registers in range(arch.max_registers_per_thread + 1))


@lru_cache(maxsize=_CACHE_ENTRIES)
def shared_mem_limits(arch: Arch, static: int, dynamic: int, carveout: int, opt_in: bool) -> tuple[int, int, int | None]:
    """cudaOccMaxBlocksPerSMSmemLimit: (blocks, bytes allocated per block, per-SM config)."""
    return _shared_mem_limit(arch, static, dynamic, carveout, opt_in)


# --------------------------------------------------------------------------
# The public calculation
# --------------------------------------------------------------------------

def block_limits(arch: Arch, kernel: LaunchConfig) -> tuple[dict, int, int, int | None]:
    """Blocks per SM each resource allows, exactly as cudaOccMaxActiveBlocksPerMultiprocessor."""
    registers, block_size, barriers = kernel.registers, kernel.block_size, kernel.barriers
    static, dynamic, carveout, opt_in = kernel.static_shared_mem, kernel.dynamic_shared_mem, kernel.carveout, kernel.opt_in
    shape = shape_limits(arch, registers, block_size)
    smem = shared_mem_limits(arch, static, dynamic, carveout, opt_in)
    limits = {"warps": shape[0], "registers": shape[1], "shared_memory": smem[0], "blocks": arch.max_blocks_per_sm}
    if barriers > 0 and arch.barriers_per_block_slot is not None:
        limits["barriers"] = _barriers_limit(arch, barriers)
    return limits, shape[2], smem[1], smem[2]


# The launch errors below that one resource alone decides: varying only that resource
# (a what-if search) can raise or clear these and no other.
RESOURCE_ERRORS = {
    "registers": ("registers-per-thread", "registers-per-block"),
    "shared_memory": ("static-shared-mem", "opt-in-required", "shared-mem-per-block"),
}


def launch_errors(arch: Arch, kernel: LaunchConfig, limits: dict) -> list[LaunchError]:
    """Why a configuration cannot launch, one named reason per broken limit."""
    errors = []
    if kernel.block_size > arch.max_threads_per_block:
        errors.append(LaunchError("block-size", "block_size",
                                  f"{kernel.block_size} threads per block exceeds {arch.sm}'s limit of {arch.max_threads_per_block}"))
    if kernel.max_threads_per_block is not None and kernel.block_size > kernel.max_threads_per_block:
        errors.append(LaunchError("launch-bounds", "block_size",
                                  f"block of {kernel.block_size} threads exceeds the kernel's __launch_bounds__ maximum of "
                                  f"{kernel.max_threads_per_block}"))
    if kernel.registers > arch.max_registers_per_thread:
        errors.append(LaunchError("registers-per-thread", "registers",
                                  f"{kernel.registers} registers per thread exceeds {arch.sm}'s limit of {arch.max_registers_per_thread}"))
    elif limits["registers"] == 0 and kernel.block_size <= arch.max_threads_per_block:
        *_, needed = _register_allocation(arch, kernel.registers, kernel.block_size, arch.warp_allocation_granularity)
        errors.append(LaunchError("registers-per-block", "registers",
                                  f"{kernel.registers} registers x {kernel.block_size} threads needs {needed} registers per block "
                                  f"after allocation granularity; {arch.sm} allows {arch.registers_per_block}"))
    # Static allocations stay within the default per-block limit (48 KB) on every architecture.
    if kernel.static_shared_mem > arch.shared_mem_per_block:
        errors.append(LaunchError("static-shared-mem", "shared_mem",
                                  f"{kernel.static_shared_mem} bytes of static shared memory exceeds the "
                                  f"{arch.shared_mem_per_block}-byte limit on static allocations; move it to dynamic shared memory"))
    elif limits["shared_memory"] == 0:
        requested = kernel.static_shared_mem + kernel.dynamic_shared_mem
        if arch.shared_mem_opt_in and not kernel.opt_in and requested <= arch.shared_mem_per_block_optin:
            errors.append(LaunchError("opt-in-required", "dynamic_shared_mem",
                                      f"{requested} bytes of shared memory per block exceeds {arch.shared_mem_per_block} without opt-in; "
                                      "set cudaFuncAttributeMaxDynamicSharedMemorySize (and pass opt_in) to use up to "
                                      f"{arch.shared_mem_per_block_optin}"))
        else:
            ceiling = shared_mem_ceiling(arch, kernel.opt_in)
            errors.append(LaunchError("shared-mem-per-block", "dynamic_shared_mem",
                                      f"{requested} bytes of shared memory per block exceeds {arch.sm}'s per-block limit of {ceiling}"))
    errors.extend(cluster_errors(arch, kernel))
    return errors


def cluster_errors(arch: Arch, kernel: LaunchConfig) -> list[LaunchError]:
    """A thread-block cluster the hardware refuses: any cluster (more than one block) before 9.0,
    or more blocks than the architecture's non-portable maximum. Rule TA603 words the same limit."""
    size = kernel.cluster_size
    if size is None or size <= 1:
        return []
    largest = arch.max_cluster_size_nonportable or arch.max_cluster_size_portable
    if largest is None:
        return [LaunchError("cluster-size", "cluster_size",
                            f"thread-block clusters need compute capability 9.0 or later; {arch.sm} has none")]
    if size > largest:
        return [LaunchError("cluster-size", "cluster_size", f"cluster of {size} blocks exceeds {arch.sm}'s maximum of {largest}")]
    return []


def occupancy(arch: Arch, kernel: LaunchConfig) -> Occupancy:
    """Theoretical occupancy of `kernel` on `arch`, with every limit and failure named."""
    limits, allocated_regs, allocated_smem, config = block_limits(arch, kernel)
    return occupancy_from(arch, kernel, limits, allocated_regs, allocated_smem, config,
                          launch_errors(arch, kernel, limits))


def occupancy_from(arch: Arch, kernel: LaunchConfig, limits: dict, allocated_regs: int, allocated_smem: int,
                   config: int | None, errors: list) -> Occupancy:
    """The Occupancy for block_limits' and launch_errors' answers (for a caller that has them)."""
    active = 0 if errors else min(limits.values())
    limiters = [name for name, blocks in limits.items() if blocks == active]  # block_limits fills LIMITERS' order
    notes = notes_on(arch, kernel)
    if INT_MAX in limits.values():  # the header's "unlimited" is None in results
        limits = {k: (None if v == INT_MAX else v) for k, v in limits.items()}
    # Positional, in field order: this runs once per batch line.
    return Occupancy(arch, kernel, active, _div_round_up(kernel.block_size, arch.warp_size), limits, limiters,
                     allocated_regs, allocated_smem, None if errors else config, errors, notes)


def notes_on(arch: Arch, kernel: LaunchConfig) -> list[str]:
    """Inputs that have no effect on this architecture: they depend on the architecture,
    kernel.carveout and kernel.opt_in alone."""
    notes = []
    if kernel.carveout == CARVEOUT_DEFAULT and not kernel.opt_in:  # the only inputs notes are about
        return notes
    if kernel.opt_in and not arch.shared_mem_opt_in:
        notes.append(f"opt-in has no effect on {arch.sm}: the per-block limit is fixed at {arch.shared_mem_per_block} bytes")
    if kernel.carveout not in (CARVEOUT_DEFAULT, CARVEOUT_MAX_L1, CARVEOUT_MAX_SHARED) and arch.shared_mem_model == "cache-config":
        notes.append(f"{arch.sm} takes no carveout percentage; only max-l1 or max-shared (cudaFuncSetCacheConfig) change its split")
    if kernel.carveout != CARVEOUT_DEFAULT and arch.shared_mem_model == "fixed":
        notes.append(f"{arch.sm} has dedicated shared memory; the carveout preference has no effect")
    return notes
