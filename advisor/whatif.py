"""What-if analysis: the cliffs on each side of a configuration.

For every resource: how far it must drop to gain a block per SM (the next step
and the one after), and how much it can grow before a block is lost.

Resident blocks are the smallest of the per-resource limits, or 0 when the
launch fails. Varying one resource changes only that resource's limit and its
own launch errors, so each probe asks the engine for that one limit (memoised
per architecture) and takes the minimum with the current result's other
limits. That is the engine's own arithmetic, granularity, carveout rounding and
the reserved kilobyte included; tests/test_whatif.py holds every cliff equal to
a scan of full `occupancy()` calls.

Resident blocks never increase when registers or shared memory grow, and never
decrease when the carveout grows, so each cliff is found by bisection.
"""

from __future__ import annotations

from typing import NamedTuple

from tuneadvise.advisor.engine import (
    Kernel,
    Occupancy,
    block_limits,
    launch_errors,
    max_shared_mem_per_block,
    register_limits,
    shared_mem_limits,
)

# The launch errors each resource alone decides (engine.launch_errors).
_OWN_ERRORS = {
    "registers": ("registers-per-thread", "registers-per-block"),
    "shared_memory": ("static-shared-mem", "opt-in-required", "shared-mem-per-block"),
}


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


def _blocks(arch, kernel: Kernel) -> int:
    limits, *_ = block_limits(arch, kernel)
    return 0 if launch_errors(arch, kernel, limits) else min(limits.values())


def _other_limits(result: Occupancy, resource: str) -> int:
    """Blocks per SM everything but `resource` allows: 0 if the launch fails for another reason."""
    own = _OWN_ERRORS[resource]
    if any(error.code not in own for error in result.errors):
        return 0
    return min((value for name, value in result.block_limits.items() if name != resource and value is not None),
               default=1 << 31)


def _register_probe(result: Occupancy):
    """registers per thread -> resident blocks, the rest of the configuration unchanged."""
    table, others = register_limits(result.arch, result.kernel.block_size), _other_limits(result, "registers")
    most = len(table) - 1  # the architecture's maximum registers per thread
    return lambda regs: 0 if regs > most else min(others, table[regs])


def _shared_mem_probe(result: Occupancy):
    """total shared memory per block (as with_total_shared_mem splits it) -> resident blocks."""
    arch, kernel = result.arch, result.kernel
    others, static_limit = _other_limits(result, "shared_memory"), arch.shared_mem_per_block
    static, carveout, opt_in = kernel.static_shared_mem, kernel.carveout, kernel.opt_in

    def blocks(total: int) -> int:
        if total < static:  # the static part shrinks (see with_total_shared_mem)
            return 0 if total > static_limit else min(others, shared_mem_limits(arch, total, 0, carveout, opt_in)[0])
        if static > static_limit:
            return 0
        return min(others, shared_mem_limits(arch, static, total - static, carveout, opt_in)[0])

    return blocks


def _step(result: Occupancy, value: int, blocks: int) -> Step:
    """A Step for `result`'s block shape, which the varied resource leaves unchanged."""
    return Step(value, blocks, blocks * result.warps_per_block / result.arch.max_warps_per_sm)


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


def _steps_down(result: Occupancy, probe, current_value: int, steps: int, unit: int = 1) -> tuple[Step, ...]:
    """Walk down the staircase: each step is the largest value that allows more blocks than the last."""
    found, best, value = [], result.active_blocks_per_sm, current_value
    while len(found) < steps and probe(0) > best:
        # Values are scanned in units; the largest value below `value` that gains a block.
        gaining = _last_with(0, (value - 1) // unit, lambda k: probe(k * unit) > best)
        if gaining is None:
            break
        value = gaining * unit
        best = probe(value)
        found.append(_step(result, value, best))
    return tuple(found)


@_memoised_per_result
def register_cliff(result: Occupancy, steps: int = 2) -> Cliff:
    arch, current = result.arch, result.kernel.registers
    probe = _register_probe(result)
    down = _steps_down(result, probe, current, steps)
    most = arch.max_registers_per_thread
    last = _last_with(current, most, lambda regs: probe(regs) >= result.active_blocks_per_sm)
    headroom = None if last in (None, most) else last - current
    return Cliff("registers", current, down, headroom)


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
    total = kernel.static_shared_mem + kernel.dynamic_shared_mem
    probe = _shared_mem_probe(result)
    down = _steps_down(result, probe, total, steps, arch.shared_mem_allocation_unit) if total else ()
    ceiling = max_shared_mem_per_block(arch, kernel)
    last = _last_with(total, ceiling, lambda size: probe(size) >= result.active_blocks_per_sm)
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
    others = _other_limits(result, "shared_memory")
    static, dynamic, opt_in = kernel.static_shared_mem, kernel.dynamic_shared_mem, kernel.opt_in

    def blocks(percent: int) -> int:  # the carveout decides no launch error, only the limit
        return min(others, shared_mem_limits(arch, static, dynamic, percent, opt_in)[0])

    most = blocks(100)
    if most <= result.active_blocks_per_sm:
        return None
    # Blocks never fall as the carveout grows: find the first percentage that reaches the most.
    percent = 100 - _last_with(0, 100, lambda p: blocks(100 - p) >= most)
    return _step(result, percent, blocks(percent))
