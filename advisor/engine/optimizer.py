"""Block-size optimizer: the block size with the highest occupancy, as
cudaOccMaxPotentialOccupancyBlockSize(VariableSMem) computes it, ties included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...specs.records import Arch
from .occupancy import block_limits, launch_errors

if TYPE_CHECKING:  # the engine reads a LaunchConfig's fields by name and imports nothing of it
    from ..launch import LaunchConfig


@dataclass(frozen=True)
class LinearSharedMem:
    """Dynamic shared memory as a function of block size: base + per_thread x threads."""

    base: int = 0
    per_thread: int = 0

    def __call__(self, block_size: int) -> int:
        return self.base + self.per_thread * block_size

    def describe(self) -> str:
        if not self.per_thread:
            return f"{self.base} B"
        return f"{self.base} + {self.per_thread} x threads B" if self.base else f"{self.per_thread} x threads B"


@dataclass(frozen=True)
class BlockSizeChoice:
    block_size: int
    min_grid_size: int  # blocks that fill every SM once at this occupancy
    blocks_per_sm: int
    occupancy: float
    dynamic_shared_mem: int
    tried: tuple  # (block size, blocks per SM, threads per SM), in the order tried
    tie_note: str | None


def _active_blocks(arch: Arch, kernel: LaunchConfig) -> int:
    limits, *_ = block_limits(arch, kernel)
    return min(limits.values())


def max_potential_block_size(arch: Arch, kernel: LaunchConfig, shared_mem: LinearSharedMem, sm_count: int) -> BlockSizeChoice:
    """Walk block sizes from the largest warp multiple down, keep the first strict maximum.

    This is the header's search: candidates are min(limit, k x warp size), the
    largest first; a later candidate replaces the best only with strictly more
    resident threads, so among equals the largest block wins; the walk stops at
    the first candidate that fills the SM. `kernel.block_size` is ignored.
    """
    limit = min(arch.max_threads_per_block, kernel.max_threads_per_block or arch.max_threads_per_block)
    granularity = arch.warp_size
    best_block = best_blocks = best_threads = 0
    tried = []
    aligned = -(-limit // granularity) * granularity
    while aligned > 0:
        block = min(limit, aligned)
        candidate = kernel.replace(block_size=block, dynamic_shared_mem=shared_mem(block))
        blocks = _active_blocks(arch, candidate)
        threads = block * blocks
        tried.append((block, blocks, threads))
        if threads > best_threads:
            best_block, best_blocks, best_threads = block, blocks, threads
        if best_threads == arch.max_threads_per_sm:
            break
        aligned -= granularity
    ties = [b for b, _, t in tried if t == best_threads and b != best_block and best_threads]
    tie_note = None
    if ties:
        tie_note = (f"block sizes {', '.join(map(str, sorted(ties)))} reach the same {best_threads} resident threads per SM; "
                    f"like cudaOccMaxPotentialOccupancyBlockSize, the largest ({best_block}) is kept")
    return BlockSizeChoice(
        block_size=best_block,
        min_grid_size=best_blocks * sm_count,
        blocks_per_sm=best_blocks,
        occupancy=best_threads / arch.max_threads_per_sm,
        dynamic_shared_mem=shared_mem(best_block) if best_block else 0,
        tried=tuple(tried),
        tie_note=tie_note,
    )


def kernel_errors(arch: Arch, kernel: LaunchConfig) -> list:
    """Launch errors that no block size can cure (register cap, static shared memory)."""
    probe = kernel.replace(block_size=arch.warp_size, dynamic_shared_mem=0, max_threads_per_block=None)
    limits, *_ = block_limits(arch, probe)
    return [e for e in launch_errors(arch, probe, limits) if e.code in ("registers-per-thread", "static-shared-mem")]
