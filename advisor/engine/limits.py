"""One small function per limit, as cuda_occupancy.h (CUDA 13.5) has them, each
named after the header's function it mirrors. Pure arithmetic on an Arch and a
few numbers: what the header hard-codes per compute capability (allocation
units, the register cap, whether opt-in exists, whether the reserved shared
memory counts per block) is read from the Arch, which has it from the spec."""

from __future__ import annotations

from ...specs.records import Arch
from ..inputs import CARVEOUT_DEFAULT, CARVEOUT_MAX_L1

INT_MAX = 2**31 - 1  # the header's "unlimited"

# In the order of cudaOccLimitingFactor's bits.
LIMITERS = ("warps", "registers", "shared_memory", "blocks", "virtual_resources", "barriers")

SIZE_T = 2**64  # cudaOccAvailableDynamicSMemPerBlock subtracts in size_t, which wraps


def div_round_up(x: int, y: int) -> int:
    return (x + (y - 1)) // y


def _round_up(x: int, y: int) -> int:
    return y * div_round_up(x, y)


def _header_max_regs_per_thread(arch: Arch) -> int:
    """cudaOccRegAllocationMaxPerThread, which switches on the compute capability: the spec holds it."""
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
    limit once the kernel opted in (where the architecture has one), else the default."""
    return arch.shared_mem_per_block_optin if (opt_in and arch.shared_mem_opt_in) else arch.shared_mem_per_block


def warps_limit(arch: Arch, block_size: int) -> int:
    """cudaOccMaxBlocksPerSMWarpsLimit (partitioned global caching off)."""
    if block_size > arch.max_threads_per_block:
        return 0
    return arch.max_warps_per_sm // div_round_up(block_size, arch.warp_size)


def register_allocation(arch: Arch, registers: int, block_size: int, granularity: int) -> tuple[int, int, int, int]:
    """(warps, registers per warp, per block, per block as the hardware's launch check assumes it)."""
    warps = div_round_up(block_size, arch.warp_size)
    per_warp = _round_up(registers * arch.warp_size, arch.register_allocation_unit)
    # The hardware's launch check assumes registers go to all sub-partitions at once.
    return warps, per_warp, per_warp * warps, per_warp * _round_up(warps, granularity)


def registers_limit(arch: Arch, registers: int, block_size: int, granularity: int) -> tuple[int, int]:
    """cudaOccMaxBlocksPerSMRegsLimit: (blocks, registers allocated per block)."""
    warps, per_warp, per_block, assumed_per_block = register_allocation(arch, registers, block_size, granularity)
    if (arch.registers_per_block < assumed_per_block
            or arch.registers_per_block < per_block
            or registers > _header_max_regs_per_thread(arch)):
        return 0, per_block
    if per_warp == 0:
        return INT_MAX, per_block
    warps_per_partition = (arch.registers_per_sm // granularity) // per_warp
    return (warps_per_partition * granularity) // warps, per_block


def most_registers_for(arch: Arch, block_size: int, blocks: int) -> int:
    """The most registers per thread with which `blocks` (>= 1) blocks of `block_size` threads
    are resident as far as registers go: registers_limit (and the launch check at
    register_launch_check_granularity, where the architecture has one) inverted in closed form.
    0 registers are never refused, so the answer is at least 0.

    registers_limit gives floor(floor(registers_per_sm / G / per_warp) * G / warps) blocks, G the
    warp allocation granularity: at least `blocks` exactly when per_warp <= (registers_per_sm // G)
    // ceil(blocks * warps / G); the per-block checks bound per_warp by registers_per_block over
    the warps rounded up to G; and per_warp, registers * warp_size rounded up to the allocation
    unit, stays within a bound M exactly when registers <= (M // unit * unit) // warp_size."""
    warps = div_round_up(block_size, arch.warp_size)
    granularity = arch.warp_allocation_granularity
    per_warp = min((arch.registers_per_sm // granularity) // div_round_up(blocks * warps, granularity),
                   arch.registers_per_block // _round_up(warps, granularity))
    check = arch.register_launch_check_granularity
    if check:  # one block must pass the launch check too (see cached_limits.shape_limits)
        per_warp = min(per_warp, (arch.registers_per_sm // check) // div_round_up(warps, check),
                       arch.registers_per_block // _round_up(warps, check))
    unit = arch.register_allocation_unit
    return min(per_warp // unit * unit // arch.warp_size, _header_max_regs_per_thread(arch))


def shared_mem_limit(arch: Arch, static_shared_mem: int, dynamic_shared_mem: int, carveout: int,
                      opt_in: bool) -> tuple[int, int, int | None]:
    """cudaOccMaxBlocksPerSMSmemLimit: (blocks, bytes allocated per block, per-SM config)."""
    unit = arch.shared_mem_allocation_unit
    static = static_shared_mem + arch.reserved_shared_mem_per_block
    allocated = _round_up(static + dynamic_shared_mem, unit)
    limit, max_dynamic = shared_mem_block_limit(arch, static_shared_mem, opt_in)
    if (max_dynamic is not None and dynamic_shared_mem > max_dynamic) or allocated > limit:
        return 0, allocated, None
    config = shared_mem_config(arch, carveout, allocated)
    blocks = config // allocated if allocated > 0 else INT_MAX
    return blocks, allocated, config


def shared_mem_block_limit(arch: Arch, static_shared_mem: int, opt_in: bool) -> tuple[int, int | None]:
    """cudaOccMaxBlocksPerSMSmemLimit's per-block check: (the most bytes one block's allocation may
    take, the most dynamic bytes when the kernel opted in, else None)."""
    static = static_shared_mem + arch.reserved_shared_mem_per_block
    if opt_in and arch.shared_mem_opt_in:
        # The kernel raised cudaFuncAttributeMaxDynamicSharedMemorySize to the largest value allowed.
        max_dynamic = max(arch.shared_mem_per_block_optin - static_shared_mem, 0)
        limit = (arch.shared_mem_per_block_optin if static + max_dynamic > arch.shared_mem_per_block
                 else arch.shared_mem_per_block)
    else:
        max_dynamic, limit = None, arch.shared_mem_per_block
    if arch.reserved_shared_mem_in_block_limit:  # cudaOccSMemPerBlock: the driver reserves memory per block
        limit += arch.reserved_shared_mem_per_block
    return limit, max_dynamic


def shared_mem_config(arch: Arch, carveout: int, allocated: int) -> int:
    """The per-SM shared memory the driver configures for blocks of `allocated` bytes."""
    preference = shared_mem_preference(arch, carveout)
    if preference >= allocated:
        return preference
    if arch.shared_mem_model == "carveout":
        return align_up_shared_mem(arch, allocated)
    return arch.shared_mem_per_sm


def most_shared_mem_allocation_for(arch: Arch, carveout: int, blocks: int) -> int:
    """The largest allocation (a multiple of the allocation unit) of which the configured per-SM
    shared memory holds `blocks` (>= 1), the per-block limit aside: shared_mem_limit's quotient
    inverted. While the allocation fits the preference, config // allocated >= blocks exactly when
    allocated <= preference // blocks; beyond it the config is the next supported carveout (or the
    SM's whole shared memory), so each config c above the preference adds the allocations in
    (previous config, c] up to c // blocks. 0 bytes always fit."""
    unit = arch.shared_mem_allocation_unit
    preference = shared_mem_preference(arch, carveout)
    most = preference // blocks // unit * unit
    configs = arch.shared_mem_configs if arch.shared_mem_model == "carveout" else (arch.shared_mem_per_sm,)
    below = preference
    for config in configs:
        if config > preference:
            reach = config // blocks // unit * unit
            if reach > below:
                most = max(most, reach)
            below = config
    return most


def barriers_limit(arch: Arch, barriers: int) -> int:
    """cudaOccMaxBlocksPerSMBlockBarrierLimit (9.0 and later)."""
    available = arch.max_blocks_per_sm * arch.barriers_per_block_slot
    return available // barriers if barriers else INT_MAX


def virtual_resources_limit(arch: Arch, count: int) -> int:
    """cudaOccMaxBlocksPerSMVirtualResource (CUDA 13): the SM's virtual resources over the kernel's
    count; a count of 0, or an architecture without them, does not limit."""
    per_sm = arch.virtual_resources_per_sm or 0
    if per_sm <= 0 or count <= 0:
        return INT_MAX
    return per_sm // count


def available_dynamic_shared_mem(arch: Arch, static_shared_mem: int, carveout: int, opt_in: bool,
                                  blocks: int) -> tuple[int, str]:
    """cudaOccAvailableDynamicSMemPerBlock once the occupancy check passed: (bytes, what bounds them).

    "shared_memory": the SM's shared memory (the carveout's, or for one block the per-block
    limit) split among `blocks`; "shared_mem_per_block": the per-block limit; "max_dynamic":
    the function's cudaFuncAttributeMaxDynamicSharedMemorySize, which is the per-block limit less
    the static part unless the kernel opted in (then the opt-in limit less the static part)."""
    unit = arch.shared_mem_allocation_unit
    reserved = arch.reserved_shared_mem_per_block if arch.reserved_shared_mem_in_block_limit else 0
    opted = opt_in and arch.shared_mem_opt_in
    # cudaOccSMemPerBlock with the SM's whole shared memory as the block's: the opt-in limit applies.
    per_block = (arch.shared_mem_per_block_optin if opted and arch.shared_mem_per_sm > arch.shared_mem_per_block
                 else arch.shared_mem_per_block) + reserved
    if blocks == 1:
        per_sm = per_block
    else:
        per_sm = shared_mem_preference(arch, carveout) or align_up_shared_mem(arch, 1)
    available, bound = (per_sm // blocks) // unit * unit, "shared_memory"
    if available > per_block:
        available, bound = per_block, "shared_mem_per_block"
    available -= static_shared_mem
    if arch.available_dynamic_subtracts_reserved:
        available -= arch.reserved_shared_mem_per_block
    available %= SIZE_T  # the header's size_t arithmetic
    max_dynamic = max((arch.shared_mem_per_block_optin if opted else arch.shared_mem_per_block) - static_shared_mem, 0)
    if available > max_dynamic:
        available, bound = max_dynamic, "max_dynamic"
    return available, bound
