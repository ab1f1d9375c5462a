"""The exact theoretical-occupancy engine.

`engine.limits` mirrors NVIDIA's reference implementation, cuda_occupancy.h
(CUDA 13.5 by default; `tuneadvise.specs.releases` gives an older release's values), one
small function per limit, each named after the header's;
`engine.cached_limits` caches them by value; this module combines them. The arithmetic is the
header's; the constants the header hard-codes per compute capability come from
the spec (`tuneadvise.specs`), so Fermi, which the header does not cover, runs
through the same code with its own allocation units. The differential test in
tests/crosscutting/test_reference_header.py holds the two equal over a seeded sweep.

What the engine adds on top of the header: it names each launch failure (the
header returns a silent 0), and it enforces limits the header leaves to the
compiler or the launch (per-thread register cap of 2.x/3.0, static shared
memory over 48 KB, __launch_bounds__ smaller than the block).
"""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
from typing import TYPE_CHECKING, NamedTuple

from ...specs.records import Arch
from ..inputs import CARVEOUT_DEFAULT, CARVEOUT_MAX_L1, CARVEOUT_MAX_SHARED, CARVEOUT_NAMES
from .cached_limits import shape_limits, shared_mem_limits
from .limits import (
    INT_MAX,
    LIMITERS,
    align_up_shared_mem,
    available_dynamic_shared_mem,
    barriers_limit,
    div_round_up,
    register_allocation,
    shared_mem_ceiling,
    shared_mem_preference,
    virtual_resources_limit,
)

if TYPE_CHECKING:  # the engine reads a LaunchConfig's resource fields by name and imports nothing of it
    from ..launch import LaunchConfig

# Names the rest of the project imports from here.
__all__ = [
    "CARVEOUT_DEFAULT", "CARVEOUT_MAX_L1", "CARVEOUT_MAX_SHARED", "CARVEOUT_NAMES", "INT_MAX", "LIMITERS",
    "RESOURCE_ERRORS", "DynamicSharedMemBudget", "LaunchError", "Occupancy", "align_up_shared_mem", "block_limits", "cluster_errors",
    "launch_errors", "max_dynamic_shared_mem", "notes_on", "own_dynamic_shared_mem_budget", "occupancy", "occupancy_from", "shape_limits",
    "shared_mem_ceiling", "shared_mem_limits", "shared_mem_preference",
]


class LaunchError(NamedTuple):
    code: str  # stable identifier, e.g. "registers-per-thread"
    field: str  # the input that causes it
    message: str


class Occupancy(NamedTuple):
    arch: Arch
    kernel: "LaunchConfig"
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
# The public calculation
# --------------------------------------------------------------------------

def block_limits(arch: Arch, kernel: "LaunchConfig") -> tuple[dict, int, int, int | None]:
    """Blocks per SM each resource allows, exactly as cudaOccMaxActiveBlocksPerMultiprocessor."""
    registers, block_size, barriers = kernel.registers, kernel.block_size, kernel.barriers
    static, dynamic, carveout, opt_in = kernel.static_shared_mem, kernel.dynamic_shared_mem, kernel.carveout, kernel.opt_in
    shape = shape_limits(arch, registers, block_size)
    smem = shared_mem_limits(arch, static, dynamic, carveout, opt_in)
    limits = {"warps": shape[0], "registers": shape[1], "shared_memory": smem[0], "blocks": arch.max_blocks_per_sm}
    if kernel.virtual_resources > 0 and arch.virtual_resources_per_sm:
        limits["virtual_resources"] = virtual_resources_limit(arch, kernel.virtual_resources)
    if barriers > 0 and arch.barriers_per_block_slot is not None:
        limits["barriers"] = barriers_limit(arch, barriers)
    return limits, shape[2], smem[1], smem[2]


# The launch errors below that one resource alone decides: varying only that resource
# (a what-if search) can raise or clear these and no other.
RESOURCE_ERRORS = {
    "registers": ("registers-per-thread", "registers-per-block"),
    "shared_memory": ("static-shared-mem", "opt-in-required", "shared-mem-per-block"),
}


def launch_errors(arch: Arch, kernel: "LaunchConfig", limits: dict) -> list[LaunchError]:
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
        *_, needed = register_allocation(arch, kernel.registers, kernel.block_size, arch.warp_allocation_granularity)
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
                                      "opt in with cudaFuncAttributeMaxDynamicSharedMemorySize (and say so: --opt-in, "
                                      f"or opt_in in a config or batch line) to use up to {arch.shared_mem_per_block_optin}"))
        else:
            ceiling = shared_mem_ceiling(arch, kernel.opt_in)
            errors.append(LaunchError("shared-mem-per-block", "dynamic_shared_mem",
                                      f"{requested} bytes of shared memory per block exceeds {arch.sm}'s per-block limit of {ceiling}"))
    if limits.get("virtual_resources") == 0:
        errors.append(LaunchError("virtual-resources", "virtual_resources",
                                  f"{kernel.virtual_resources} virtual resources per block exceeds the "
                                  f"{arch.virtual_resources_per_sm} per SM of {arch.sm}"))
    errors.extend(cluster_errors(arch, kernel))
    return errors


def cluster_errors(arch: Arch, kernel: "LaunchConfig") -> list[LaunchError]:
    """A thread-block cluster the hardware refuses: any cluster (more than one block) before 9.0,
    or more blocks than the architecture's non-portable maximum. Rule TA603 reports these errors."""
    size = kernel.cluster_size
    if size is None or size <= 1:
        return []
    largest = arch.max_cluster_size
    if largest is None:
        return [LaunchError("cluster-size", "cluster_size",
                            f"thread-block clusters need compute capability 9.0 or later; {arch.sm} has none")]
    if size > largest:
        return [LaunchError("cluster-size", "cluster_size", f"cluster of {size} blocks exceeds {arch.sm}'s maximum of {largest}")]
    return []


def occupancy(arch: Arch, kernel: "LaunchConfig") -> Occupancy:
    """Theoretical occupancy of `kernel` on `arch`, with every limit and failure named."""
    limits, allocated_regs, allocated_smem, config = block_limits(arch, kernel)
    return occupancy_from(arch, kernel, limits, allocated_regs, allocated_smem, config,
                          launch_errors(arch, kernel, limits))


def occupancy_from(arch: Arch, kernel: "LaunchConfig", limits: dict, allocated_regs: int, allocated_smem: int,
                   config: int | None, errors: list) -> Occupancy:
    """The Occupancy for block_limits' and launch_errors' answers (for a caller that has them)."""
    active = 0 if errors else min(limits.values())
    limiters = [name for name, blocks in limits.items() if blocks == active]  # block_limits fills LIMITERS' order
    notes = notes_on(arch, kernel)
    if INT_MAX in limits.values():  # the header's "unlimited" is None in results
        limits = {k: (None if v == INT_MAX else v) for k, v in limits.items()}
    # Positional, in field order: this runs once per batch line.
    return Occupancy(arch, kernel, active, div_round_up(kernel.block_size, arch.warp_size), limits, limiters,
                     allocated_regs, allocated_smem, None if errors else config, errors, notes)


def notes_on(arch: Arch, kernel: "LaunchConfig") -> list[str]:
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


class DynamicSharedMemBudget(NamedTuple):
    """The most dynamic shared memory per block that keeps `blocks_per_sm` blocks resident."""

    arch: Arch
    kernel: "LaunchConfig"  # dynamic_shared_mem is not an input: the answer replaces it
    blocks_per_sm: int  # asked for
    max_dynamic_shared_mem: int | None  # bytes; None when that many blocks cannot reside at all
    limiter: str  # what bounds the answer (see max_dynamic_shared_mem), or the resource that
    #               keeps fewer blocks resident even without dynamic shared memory
    blocks_without_dynamic: int  # blocks per SM with no dynamic shared memory
    errors: list  # LaunchError, when the kernel cannot launch even without dynamic shared memory
    blocks_at_max: int | None  # blocks per SM the engine gives with max_dynamic_shared_mem bytes

    @property
    def keeps_blocks(self) -> bool:
        """Whether the header's answer really keeps `blocks_per_sm` blocks by the occupancy
        calculation: not always (on 3.x preferring L1 its size_t subtraction can wrap)."""
        return self.blocks_at_max is not None and self.blocks_at_max >= self.blocks_per_sm

    @property
    def keeps_more_blocks(self) -> bool:
        """Whether more blocks than asked reside with the answer's bytes (blocks_per_sm_at_max above it)."""
        return self.keeps_blocks and self.blocks_at_max > self.blocks_per_sm


def grid_waves(result: Occupancy, grid_size: int, sm_count: int) -> float | None:
    """The grid in waves of (resident blocks per SM x SMs) blocks; None when no block is resident."""
    per_wave = result.active_blocks_per_sm * sm_count
    return grid_size / per_wave if per_wave else None


def max_dynamic_shared_mem(arch: Arch, kernel: "LaunchConfig", blocks_per_sm: int) -> DynamicSharedMemBudget:
    """cudaOccAvailableDynamicSMemPerBlock: the dynamic shared memory per block available when
    `blocks_per_sm` blocks of `kernel` reside on one SM.

    The limiter is "shared_memory" when the SM's shared memory split among the blocks bounds it
    (the carveout's, or for one block the per-block limit), "shared_mem_per_block" when the
    per-block limit does, "max_dynamic" when the kernel's maximum dynamic size does (the per-block
    or opt-in limit less the static part). When even no dynamic shared memory keeps that many
    blocks, the answer is None and the limiter is the resource that holds the count lower."""
    if blocks_per_sm < 1:  # the header answers CUDA_OCC_ERROR_INVALID_INPUT
        raise ValueError(f"blocks_per_sm must be 1 or more, got {blocks_per_sm}")
    base = kernel._replace(dynamic_shared_mem=0)
    result = occupancy(arch, base)
    if result.errors or result.active_blocks_per_sm < blocks_per_sm:
        limiter = result.errors[0].code if result.errors else result.limiters[0]
        return DynamicSharedMemBudget(arch, base, blocks_per_sm, None, limiter, result.active_blocks_per_sm,
                                      result.errors, None)
    available, limiter = available_dynamic_shared_mem(arch, kernel.static_shared_mem, kernel.carveout, kernel.opt_in,
                                                       blocks_per_sm)
    at_max = occupancy(arch, base._replace(dynamic_shared_mem=available)).active_blocks_per_sm
    return DynamicSharedMemBudget(arch, base, blocks_per_sm, available, limiter, result.active_blocks_per_sm, [],
                                  at_max)


def own_dynamic_shared_mem_budget(result: Occupancy) -> DynamicSharedMemBudget:
    """max_dynamic_shared_mem for a launchable result's own blocks per SM, from the limits the result
    holds: only the shared-memory limit changes with the dynamic part, and no other launch error
    can appear, so each of the two occupancy calculations is one cached shared-memory limit."""
    arch, kernel, blocks = result.arch, result.kernel, result.active_blocks_per_sm
    others = min(v for name, v in result.block_limits.items() if name != "shared_memory" and v is not None)
    static, carveout, opt_in = kernel.static_shared_mem, kernel.carveout, kernel.opt_in
    base_blocks = min(others, shared_mem_limits(arch, static, 0, carveout, opt_in)[0])
    if base_blocks < blocks:  # Fermi/Kepler preferring L1: fewer blocks without the dynamic part
        return max_dynamic_shared_mem(arch, kernel, blocks)
    available, limiter = available_dynamic_shared_mem(arch, static, carveout, opt_in, blocks)
    at_max = min(others, shared_mem_limits(arch, static, available, carveout, opt_in)[0])  # 0: cannot launch
    return DynamicSharedMemBudget(arch, kernel._replace(dynamic_shared_mem=0), blocks, available, limiter,
                                  base_blocks, [], at_max)
