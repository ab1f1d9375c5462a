"""What-if analysis: the cliffs on each side of a configuration.

For every resource: how far it must drop to gain a block per SM (the next step
and the one after), and how much it can grow before a block is lost. All
answers come from re-running the exact engine, so allocation granularity,
carveout rounding and the reserved kilobyte are honoured by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tuneadvise.advisor.engine import Kernel, Occupancy, occupancy


@dataclass(frozen=True, slots=True)
class Step:
    value: int  # the resource's new value (registers per thread, bytes, percent...)
    blocks_per_sm: int
    occupancy: float


@dataclass(frozen=True, slots=True)
class Cliff:
    resource: str  # "registers" or "shared_memory"
    current: int
    down: tuple[Step, ...]  # the next two occupancy steps reached by reducing the resource
    headroom: int | None  # how much the resource can grow before a block is lost (None: never)


def _blocks(arch, kernel: Kernel) -> tuple[int, float]:
    result = occupancy(arch, kernel)
    return result.active_blocks_per_sm, result.occupancy


def register_cliff(result: Occupancy, steps: int = 2) -> Cliff:
    arch, kernel = result.arch, result.kernel
    current_blocks = result.active_blocks_per_sm
    down, best = [], current_blocks
    for regs in range(kernel.registers - 1, -1, -1):
        blocks, occ = _blocks(arch, replace(kernel, registers=regs))
        if blocks > best:
            # Report the largest register count that reaches this step.
            down.append(Step(regs, blocks, occ))
            best = blocks
            if len(down) == steps:
                break
    headroom = None
    for regs in range(kernel.registers + 1, arch.max_registers_per_thread + 1):
        if _blocks(arch, replace(kernel, registers=regs))[0] < current_blocks:
            headroom = regs - 1 - kernel.registers
            break
    return Cliff("registers", kernel.registers, tuple(down), headroom)


def shared_mem_cliff(result: Occupancy, steps: int = 2) -> Cliff:
    """Steps in dynamic shared memory (what a launch can change without recompiling)."""
    arch, kernel = result.arch, result.kernel
    unit = arch.shared_mem_allocation_unit
    current_blocks = result.active_blocks_per_sm
    total = kernel.static_shared_mem + kernel.dynamic_shared_mem
    down, best = [], current_blocks
    # Candidate totals: each allocation-unit boundary below the current total.
    boundary = (total - 1) // unit * unit if total else -1
    while boundary >= 0 and len(down) < steps:
        trial = _with_total(kernel, boundary)
        if trial is None:
            break
        blocks, occ = _blocks(arch, trial)
        if blocks > best:
            down.append(Step(boundary, blocks, occ))
            best = blocks
        boundary -= unit
    headroom = None
    ceiling = arch.shared_mem_per_block_optin if kernel.opt_in else arch.shared_mem_per_block
    units = -(-total // unit)
    while units * unit < ceiling:
        first_byte_of_next_unit = units * unit + 1
        if _blocks(arch, _with_total(kernel, first_byte_of_next_unit))[0] < current_blocks:
            headroom = first_byte_of_next_unit - 1 - total
            break
        units += 1
    return Cliff("shared_memory", total, tuple(down), headroom)


def _with_total(kernel: Kernel, total: int) -> Kernel | None:
    """Change the dynamic part so that static + dynamic == total (static cannot shrink at launch)."""
    dynamic = total - kernel.static_shared_mem
    if dynamic < 0:
        return replace(kernel, static_shared_mem=total, dynamic_shared_mem=0)
    return replace(kernel, dynamic_shared_mem=dynamic)


def block_size_table(result: Occupancy) -> list[Step]:
    """Occupancy for each warp-multiple block size, as NVIDIA's calculator graphs it."""
    arch, kernel = result.arch, result.kernel
    limit = min(arch.max_threads_per_block, kernel.max_threads_per_block or arch.max_threads_per_block)
    rows = []
    for block in range(arch.warp_size, limit + 1, arch.warp_size):
        blocks, occ = _blocks(arch, replace(kernel, block_size=block, max_threads_per_block=None))
        rows.append(Step(block, blocks, occ))
    return rows


def best_carveout(result: Occupancy) -> Step | None:
    """The smallest carveout percentage that reaches the highest block count, if better than now."""
    arch, kernel = result.arch, result.kernel
    if arch.shared_mem_model != "carveout" or not result.launchable:
        return None
    best = Step(kernel.carveout, result.active_blocks_per_sm, result.occupancy)
    for percent in range(0, 101):
        blocks, occ = _blocks(arch, replace(kernel, carveout=percent))
        if blocks > best.blocks_per_sm:
            best = Step(percent, blocks, occ)
    return best if best.blocks_per_sm > result.active_blocks_per_sm else None


def register_target_for(result: Occupancy, blocks: int) -> int | None:
    """The most registers per thread that still lets `blocks` blocks reside (for -maxrregcount)."""
    arch, kernel = result.arch, result.kernel
    for regs in range(arch.max_registers_per_thread, -1, -1):
        if _blocks(arch, replace(kernel, registers=regs))[0] >= blocks:
            return regs
    return None
