"""What-if analysis: the cliffs on each side of a configuration.

For every resource: how far it must drop to gain a block per SM (the next step
and the one after), and how much it can grow before a block is lost. All
answers come from re-running the exact engine, so allocation granularity,
carveout rounding and the reserved kilobyte are honoured by construction.

Resident blocks never increase when registers or shared memory grow, and never
decrease when the carveout grows, so each cliff is found by bisection.
"""

from __future__ import annotations

from typing import NamedTuple

from tuneadvise.advisor.engine import Kernel, Occupancy, block_limits, launch_errors, max_shared_mem_per_block


# NamedTuple rather than dataclass: creating a dataclass at import costs ~1 ms,
# and this module is on every command's start-up path (benchmarks/startup.py).
class Step(NamedTuple):
    value: int  # the resource's new value (registers per thread, bytes, percent...)
    blocks_per_sm: int
    occupancy: float


class Cliff(NamedTuple):
    resource: str  # "registers" or "shared_memory"
    current: int
    down: tuple[Step, ...]  # the next occupancy steps reached by reducing the resource
    headroom: int | None  # how much the resource can grow before a block is lost (None: never)


# Cliff searches probe the same (architecture, kernel) points again and again
# (every kernel of a lint run with the same block size walks the same register
# staircase), so resident-block counts are memoised. Keyed by the Arch's id,
# with the Arch kept in the value so the id cannot be reused while cached.
_BLOCKS_CACHE: dict = {}
_BLOCKS_CACHE_LIMIT = 1 << 18


def _blocks(arch, kernel: Kernel) -> int:
    key = (id(arch), kernel)
    hit = _BLOCKS_CACHE.get(key)
    if hit is not None and hit[0] is arch:
        return hit[1]
    limits, *_ = block_limits(arch, kernel)
    blocks = 0 if launch_errors(arch, kernel, limits) else min(limits.values())
    if len(_BLOCKS_CACHE) >= _BLOCKS_CACHE_LIMIT:
        _BLOCKS_CACHE.clear()
    _BLOCKS_CACHE[key] = (arch, blocks)
    return blocks


def _memoised_per_result(function):
    """Cache a what-if answer per (architecture, kernel): the rules ask for the
    same cliff more than once (TA301 and TA304), and lint asks for identical
    kernels many times."""
    cache: dict = {}

    def wrapper(result: Occupancy, *args):
        key = (id(result.arch), result.kernel, args)
        hit = cache.get(key)
        if hit is not None and hit[0] is result.arch:
            return hit[1]
        if len(cache) >= 1 << 14:
            cache.clear()
        value = function(result, *args)
        cache[key] = (result.arch, value)
        return value

    wrapper.__doc__, wrapper.__name__ = function.__doc__, function.__name__
    return wrapper


def step_at(arch, kernel: Kernel, value: int) -> Step:
    """Blocks per SM and occupancy of `kernel`, labelled with the varied resource's `value`."""
    blocks = _blocks(arch, kernel)
    warps = -(-kernel.block_size // arch.warp_size)
    return Step(value, blocks, blocks * warps / arch.max_warps_per_sm)


def _last_with(lo: int, hi: int, keeps) -> int | None:
    """Largest x in [lo, hi] with keeps(x), for a predicate true up to some point; None if never."""
    if lo > hi or not keeps(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if keeps(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _steps_down(arch, kernel, current_value, current_blocks, steps, make, floor, unit=1):
    """Walk down the staircase: each step is the largest value that allows more blocks than the last."""
    found, best, value = [], current_blocks, current_value
    while len(found) < steps:
        # Values are scanned in units; the largest value below `value` that gains a block.
        top = (value - 1) // unit
        candidates = _last_with(floor // unit, top, lambda k: _blocks(arch, make(k * unit)) > best) \
            if _blocks(arch, make(floor)) > best else None
        if candidates is None:
            break
        value = candidates * unit
        step = step_at(arch, make(value), value)
        found.append(step)
        best = step.blocks_per_sm
    return tuple(found)


@_memoised_per_result
def register_cliff(result: Occupancy, steps: int = 2) -> Cliff:
    arch, kernel = result.arch, result.kernel
    make = lambda regs: kernel._replace(registers=regs)  # noqa: E731
    down = _steps_down(arch, kernel, kernel.registers, result.active_blocks_per_sm, steps, make, 0)
    last = _last_with(kernel.registers, arch.max_registers_per_thread,
                      lambda regs: _blocks(arch, make(regs)) >= result.active_blocks_per_sm)
    headroom = None if last == arch.max_registers_per_thread else last - kernel.registers
    return Cliff("registers", kernel.registers, down, headroom)


def with_total_shared_mem(kernel: Kernel, total: int) -> Kernel:
    """Change the dynamic part so that static + dynamic == total (static cannot shrink at launch)."""
    dynamic = total - kernel.static_shared_mem
    if dynamic < 0:
        return kernel._replace(static_shared_mem=total, dynamic_shared_mem=0)
    return kernel._replace(dynamic_shared_mem=dynamic)


@_memoised_per_result
def shared_mem_cliff(result: Occupancy, steps: int = 2) -> Cliff:
    """Steps in total shared memory per block; the dynamic part is what a launch can change."""
    arch, kernel = result.arch, result.kernel
    unit = arch.shared_mem_allocation_unit
    total = kernel.static_shared_mem + kernel.dynamic_shared_mem
    make = lambda size: with_total_shared_mem(kernel, size)  # noqa: E731
    down = _steps_down(arch, kernel, total, result.active_blocks_per_sm, steps, make, 0, unit) if total else ()
    ceiling = max_shared_mem_per_block(arch, kernel)
    last = _last_with(total, ceiling, lambda size: _blocks(arch, make(size)) >= result.active_blocks_per_sm)
    headroom = None if last in (None, ceiling) else last - total
    return Cliff("shared_memory", total, down, headroom)


def block_size_table(result: Occupancy) -> list[Step]:
    """Occupancy for each warp-multiple block size, as NVIDIA's calculator graphs it."""
    arch, kernel = result.arch, result.kernel
    limit = min(arch.max_threads_per_block, kernel.max_threads_per_block or arch.max_threads_per_block)
    return [step_at(arch, kernel._replace(block_size=block, max_threads_per_block=None), block)
            for block in range(arch.warp_size, limit + 1, arch.warp_size)]


@_memoised_per_result
def best_carveout(result: Occupancy) -> Step | None:
    """The smallest carveout percentage that reaches the most blocks, if better than now."""
    arch, kernel = result.arch, result.kernel
    if arch.shared_mem_model != "carveout" or not result.launchable:
        return None
    most = step_at(arch, kernel._replace(carveout=100), 100)
    if most.blocks_per_sm <= result.active_blocks_per_sm:
        return None
    # Blocks never fall as the carveout grows: find the first percentage that reaches the most.
    lowest = _last_with(0, 100, lambda p: _blocks(arch, kernel._replace(carveout=100 - p)) >= most.blocks_per_sm)
    percent = 100 - lowest
    return step_at(arch, kernel._replace(carveout=percent), percent)
