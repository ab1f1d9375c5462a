"""What-if analysis: the cliffs on each side of a configuration.

For every resource: how far it must drop to gain a block per SM (the next step
and the one after), and how much it can grow before a block is lost.

Resident blocks are the smallest of the per-resource limits, or 0 when the
launch fails. Varying one resource changes only that resource's limit and its
own launch errors, so each probe asks the engine for that one limit (cached
by value) and takes the minimum with the current result's other
limits. That is the engine's own arithmetic, granularity, carveout rounding and
the reserved kilobyte included; tests/engine/test_whatif.py holds every cliff equal to
a scan of full `occupancy()` calls.

Resident blocks never increase when registers or shared memory grow, so each
step of those staircases is computed in closed form: the header's allocation
arithmetic inverted (limits.most_registers_for, most_total_shared_mem_for), the
most of the resource that still reaches a given block count. Where blocks can
rise again as a block grows (Fermi/Kepler preferring L1) the allocation
boundaries are scanned; the best carveout, which never loses blocks as the
carveout grows, is found by bisection. A cliff
depends on the architecture, the varied resource's own inputs and the other
limits' minimum, not on the whole kernel, so it is cached by those values: a lint
run's thousands of distinct kernels share a few hundred cliffs.
"""

# Annotations here are evaluated, not text (no `from __future__ import annotations`): typing.NamedTuple
# compiles every annotation written as text when its class is made, on every command's start-up.
from typing import TYPE_CHECKING, NamedTuple

from .cached_limits import cached_cliff
from .limits import most_registers_for, most_shared_mem_allocation_for, shared_mem_block_limit
from .occupancy import (
    RESOURCE_ERRORS,
    Occupancy,
    block_limits,
    launch_errors,
    shape_limits,
    shared_mem_ceiling,
    shared_mem_limits,
    shared_mem_preference,
)

if TYPE_CHECKING:  # the engine reads a LaunchConfig's fields by name and imports nothing of it
    from ..launch import LaunchConfig


# NamedTuple rather than dataclass: this module is on every command's start-up path, and a
# NamedTuple is built at import without generating code.
class Step(NamedTuple):
    value: int  # the resource's new value (registers per thread, bytes, percent...)
    blocks_per_sm: int
    occupancy: float


class Cliff(NamedTuple):
    resource: str  # "registers" or "shared_memory"
    current: int
    down: tuple[Step, ...]  # the next occupancy steps reached by reducing the resource
    headroom: int | None  # how much the resource can grow before a block is lost (None: never)


def _blocks(arch, kernel: "LaunchConfig") -> int:
    limits, *_ = block_limits(arch, kernel)
    return 0 if launch_errors(arch, kernel, limits) else min(limits.values())


def _other_limits(result: Occupancy, resource: str) -> int:
    """Blocks per SM everything but `resource` allows: 0 if the launch fails for another reason."""
    if result.errors:
        own = RESOURCE_ERRORS[resource]
        if any(error.code not in own for error in result.errors):
            return 0
    return _least_limit(result, resource)


def _least_limit(result: Occupancy, resource: str, also: str = "") -> int:
    """The smallest of the result's limits but `resource`'s (and `also`'s); 2**31 if none limits."""
    least = 1 << 31
    for name, value in result.block_limits.items():  # a loop: asked for every what-if probe, it skips two names
        if name != resource and name != also and value is not None and value < least:
            least = value
    return least


def step_at(arch, kernel: "LaunchConfig", value: int) -> Step:
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


def _last_kept(lo: int, hi: int, keeps, changes) -> int | None:
    """Largest x in [lo, hi] with keeps(y) for every y from lo to x, for a predicate that can only
    change at the values `changes(lo, hi)` lists in ascending order; None if keeps(lo) fails."""
    if lo > hi or not keeps(lo):
        return None
    return next((x - 1 for x in changes(lo, hi) if not keeps(x)), hi)


def _allocation_starts(unit: int, reserved: int):
    """The values in (lo, hi] at which an allocation of (value + reserved) bytes, rounded up to
    `unit`, grows: the only places a shared-memory limit can change."""
    return lambda lo, hi: range(lo + 1 + (-reserved - lo) % unit, hi + 1, unit)


def _cliff(arch, resource: str, probe, current: int, ceiling: int, warps_per_block: int, steps: int,
           unit: int = 1, changes=None) -> Cliff:
    """The staircase around `current` for resident blocks = probe(value): each step down is the
    largest value (in units) below the last that allows more blocks; the headroom is how far the
    value can grow, up to `ceiling`, before a block is first lost.

    A probe that never rises with the value is bisected; one that may (`changes` given: the values
    where it can change) is scanned."""
    def step(value: int, blocks: int) -> Step:
        return Step(value, blocks, blocks * warps_per_block / arch.max_warps_per_sm)

    active = probe(current)
    down, best, value = [], active, current
    while current and len(down) < steps and (changes is not None or probe(0) > best):
        top = (value - 1) // unit
        if changes is None:
            gaining = _last_with(0, top, lambda k, best=best: probe(k * unit) > best)
        else:
            gaining = next((k for k in range(top, -1, -1) if probe(k * unit) > best), None)
        if gaining is None:
            break
        value = gaining * unit
        best = probe(value)
        down.append(step(value, best))
    keeps = lambda v: probe(v) >= active  # noqa: E731
    last = _last_with(current, ceiling, keeps) if changes is None else _last_kept(current, ceiling, keeps, changes)
    return Cliff(resource, current, tuple(down), None if last in (None, ceiling) else last - current)


def register_cliff(result: Occupancy, steps: int = 2) -> Cliff:
    """Registers per thread: the steps down to more blocks, and the headroom up."""
    kernel = result.kernel
    return _register_cliff(result.arch, kernel.block_size, kernel.registers, _other_limits(result, "registers"), steps)


@cached_cliff
def _register_cliff(arch, block_size: int, registers: int, others: int, steps: int) -> Cliff:
    """In closed form: blocks never rise with registers, so each step down is the most registers
    that reach one block more (most_registers_for), and the headroom the most that keep as many."""
    most = arch.max_registers_per_thread
    warps = -(-block_size // arch.warp_size)

    def blocks(regs: int) -> int:
        return 0 if regs > most else min(others, shape_limits(arch, regs, block_size)[1])

    def reaching(wanted: int) -> int:  # the most registers with at least `wanted` blocks (0 always has them)
        return min(most_registers_for(arch, block_size, wanted), most)

    active = blocks(registers)
    down, best, value = [], active, registers
    while registers and len(down) < steps and others > best:
        value = min(value - 1, reaching(best + 1))
        best = blocks(value)
        down.append(Step(value, best, best * warps / arch.max_warps_per_sm))
    last = most if active == 0 else reaching(active)
    return Cliff("registers", registers, tuple(down), None if last in (None, most) else last - registers)


def with_total_shared_mem(kernel: "LaunchConfig", total: int) -> "LaunchConfig":
    """Change the dynamic part so that static + dynamic == total (static cannot shrink at launch)."""
    dynamic = total - kernel.static_shared_mem
    if dynamic < 0:
        return kernel._replace(static_shared_mem=total, dynamic_shared_mem=0)
    return kernel._replace(dynamic_shared_mem=dynamic)


def shared_mem_cliff(result: Occupancy, steps: int = 2) -> Cliff:
    """Total shared memory per block: the dynamic part is what a launch can change."""
    kernel = result.kernel
    return _shared_mem_cliff(result.arch, kernel.static_shared_mem, kernel.dynamic_shared_mem, kernel.carveout,
                             kernel.opt_in, result.warps_per_block, _other_limits(result, "shared_memory"), steps)


@cached_cliff
def _shared_mem_cliff(arch, static: int, dynamic: int, carveout: int, opt_in: bool, warps_per_block: int,
                      others: int, steps: int) -> Cliff:
    static_limit = arch.shared_mem_per_block

    def probe(total: int) -> int:  # with_total_shared_mem's split of `total`, through the engine's limits
        if total < static:  # the static part shrinks
            return 0 if total > static_limit else min(others, shared_mem_limits(arch, total, 0, carveout, opt_in)[0])
        if static > static_limit:
            return 0
        return min(others, shared_mem_limits(arch, static, total - static, carveout, opt_in)[0])

    ceiling = shared_mem_ceiling(arch, opt_in)
    if arch.shared_mem_model == "cache-config" and shared_mem_preference(arch, carveout) < arch.shared_mem_per_sm:
        # Fermi/Kepler preferring L1: a block too big for the small shared-memory split makes the
        # driver pick the large one, so blocks per SM can rise again as the block grows: scanned.
        unit, reserved = arch.shared_mem_allocation_unit, arch.reserved_shared_mem_per_block
        return _cliff(arch, "shared_memory", probe, static + dynamic, ceiling, warps_per_block, steps, unit,
                      _allocation_starts(unit, reserved))

    def reaching(wanted: int) -> int | None:
        return most_total_shared_mem_for(arch, static, carveout, opt_in, wanted) if wanted <= others else None

    return _staircase(arch, "shared_memory", probe, reaching, static + dynamic, ceiling, warps_per_block, steps,
                      arch.shared_mem_allocation_unit)


def most_total_shared_mem_for(arch, static: int, carveout: int, opt_in: bool, blocks: int) -> int | None:
    """The most total shared memory (with_total_shared_mem's split of it, for a kernel with `static`
    bytes) with which `blocks` (>= 1) blocks fit as far as shared memory goes; None if not even 0
    bytes do. Blocks never rise with the total here (the carveout and Maxwell models), so every
    smaller total fits too. A total at or above the static part keeps it (the per-block limit,
    which covers the opt-in maximum of the dynamic part, bounds it); a smaller one becomes all
    static (at most the static limit)."""
    reserved = arch.reserved_shared_mem_per_block
    unit = arch.shared_mem_allocation_unit
    fits = most_shared_mem_allocation_for(arch, carveout, blocks) - reserved
    if static <= arch.shared_mem_per_block:
        # The opt-in maximum (the opt-in limit less the static part) is within this per-block limit.
        most = min(fits, shared_mem_block_limit(arch, static, opt_in)[0] // unit * unit - reserved)
        if most >= static:
            return most
    limit, _ = shared_mem_block_limit(arch, 0, opt_in)
    most = min(fits, limit // unit * unit - reserved, arch.shared_mem_per_block)  # all static now
    return most if most >= 0 else None


def _staircase(arch, resource: str, probe, reaching, current: int, ceiling: int, warps_per_block: int, steps: int,
               unit: int) -> Cliff:
    """_cliff for a probe that never rises with the value, in closed form: `reaching(wanted)` is the
    most value with at least `wanted` blocks (None if none), so each step down is the largest
    multiple of `unit` below the last that reaches one block more."""
    active = probe(current)
    down, best, value = [], active, current
    while current and len(down) < steps:
        most = reaching(best + 1)
        if most is None:
            break
        value = min(value - 1, most) // unit * unit
        best = probe(value)
        down.append(Step(value, best, best * warps_per_block / arch.max_warps_per_sm))
    if active == 0 or current > ceiling:  # nothing to lose, or over the limit already
        return Cliff(resource, current, tuple(down), None)
    last = reaching(active)
    last = None if last is None or last < current else min(last, ceiling)
    return Cliff(resource, current, tuple(down), None if last in (None, ceiling) else last - current)


def block_size_table(result: Occupancy) -> list[Step]:
    """Occupancy for each warp-multiple block size, as NVIDIA's calculator graphs it.

    Only the warps' and the registers' limits depend on the block size (with the launch errors
    they decide: the block size, the launch bounds it is freed of, the registers per block), so
    each size costs one shape_limits; every other limit, and whether another error stops the
    launch, is the current result's."""
    arch, kernel = result.arch, result.kernel
    limit = min(arch.max_threads_per_block, kernel.max_threads_per_block or arch.max_threads_per_block)
    others = 0 if any(error.code not in _SHAPE_ERRORS for error in result.errors) else \
        _least_limit(result, "registers", "warps")
    registers, warp, most_warps = kernel.registers, arch.warp_size, arch.max_warps_per_sm
    table = []
    for block in range(warp, limit + 1, warp):
        by_warps, by_registers, _ = shape_limits(arch, registers, block)
        blocks = min(others, by_warps, by_registers)
        table.append(Step(block, blocks, blocks * (block // warp) / most_warps))
    return table


# The launch errors that the block size alone decides.
_SHAPE_ERRORS = frozenset({"block-size", "launch-bounds", "registers-per-block"})


def best_carveout(result: Occupancy) -> Step | None:
    """The smallest carveout percentage that reaches the most blocks, if better than now."""
    arch, kernel = result.arch, result.kernel
    if arch.shared_mem_model != "carveout" or not result.launchable:
        return None
    return _best_carveout(arch, kernel.static_shared_mem, kernel.dynamic_shared_mem, kernel.opt_in,
                          result.active_blocks_per_sm, result.warps_per_block, _other_limits(result, "shared_memory"))


@cached_cliff
def _best_carveout(arch, static: int, dynamic: int, opt_in: bool, active: int, warps_per_block: int,
                   others: int) -> Step | None:
    def blocks(percent: int) -> int:  # the carveout decides no launch error, only the limit
        return min(others, shared_mem_limits(arch, static, dynamic, percent, opt_in)[0])

    most = blocks(100)
    if most <= active:
        return None
    # Blocks never fall as the carveout grows: find the first percentage that reaches the most.
    percent = 100 - _last_with(0, 100, lambda p: blocks(100 - p) >= most)
    return Step(percent, most, most * warps_per_block / arch.max_warps_per_sm)


def bounds_register_cap(arch, max_threads: int, min_blocks: int = 1) -> int:
    """The most registers per thread with which `min_blocks` blocks of `max_threads` threads are
    resident on one SM: what `__launch_bounds__(max_threads, min_blocks)` leaves the compiler
    (0 when not even one register does)."""
    return min(most_registers_for(arch, max_threads, max(min_blocks, 1)), arch.max_registers_per_thread)


def register_caps(result: Occupancy) -> tuple[int, ...]:
    """The register caps below the kernel's count at which its blocks per SM change, descending:
    for each higher step of the register staircase (the other limits' minimum applied), the most
    registers that reach it. Capping a build at each of these is where occupancy can change."""
    arch, kernel = result.arch, result.kernel
    others = _other_limits(result, "registers")
    top = min(kernel.registers, arch.max_registers_per_thread)
    caps, wanted = [], min(others, shape_limits(arch, top, kernel.block_size)[1]) + 1
    while wanted <= others:
        regs = min(most_registers_for(arch, kernel.block_size, wanted), top - 1)
        if regs < 1:
            break
        caps.append(regs)
        wanted = min(others, shape_limits(arch, regs, kernel.block_size)[1]) + 1
    return tuple(caps)
