"""One check per rule code. Each yields (message, details) pairs; the registry
adds code, severity and source. Messages carry the actual numbers and, where
there is one, the concrete change to make."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from tuneadvise.advisor.engine import whatif
from tuneadvise.advisor.engine.occupancy import (
    CARVEOUT_DEFAULT,
    CARVEOUT_MAX_SHARED,
    Occupancy,
    align_up_shared_mem,
    occupancy,
)

Check = Callable[["Context", dict], Iterator[tuple[str, dict]]]
CHECKS: dict[str, Check] = {}


def check(code: str):
    def register(fn: Check) -> Check:
        CHECKS[code] = fn
        return fn

    return register


class Context(NamedTuple):
    result: Occupancy
    product: object | None
    block_dims: tuple
    spill_stores: int | None
    spill_loads: int | None
    grid_size: int | None
    sm_count: int | None
    cluster_size: int | None
    compiled_for: str | None

    @classmethod
    def build(cls, resolved, result) -> Context:
        """What the checks read: the result and its LaunchConfig's launch context, with the SM
        count from the product when the configuration does not give one."""
        product, launch = resolved.product, result.kernel
        sm_count = launch.sm_count or (product.get("sm_count") if product else None)
        return cls(result=result, product=product, block_dims=launch.dims, spill_stores=launch.spill_stores,
                   spill_loads=launch.spill_loads, grid_size=launch.grid_size, sm_count=sm_count,
                   cluster_size=launch.cluster_size, compiled_for=launch.compiled_for)

    @property
    def arch(self):
        return self.result.arch

    @property
    def kernel(self):
        return self.result.kernel


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%".replace(".0%", "%")


# -- launch validity: one rule per engine launch-error code -------------------

_ERROR_RULES = {
    "TA102": "launch-bounds",
    "TA103": "registers-per-thread",
    "TA104": "registers-per-block",
    "TA105": "static-shared-mem",
    "TA106": "opt-in-required",
    "TA107": "shared-mem-per-block",
}


def _launch_error_check(error_code: str) -> Check:
    def run(ctx: Context, params: dict):
        for error in ctx.result.errors:
            if error.code == error_code:
                yield error.message, {"field": error.field}

    return run


for _code, _error in _ERROR_RULES.items():
    check(_code)(_launch_error_check(_error))


# -- launch shape -------------------------------------------------------------

@check("TA201")
def _warp_multiple(ctx: Context, params: dict):
    size, warp = ctx.kernel.block_size, ctx.arch.warp_size
    if size % warp:
        lanes = -size % warp
        yield (f"block of {size} threads fills {-(-size // warp)} warps with {lanes} idle lanes; "
               f"use {size // warp * warp or warp} or {-(-size // warp) * warp}"), {"block_size": size, "idle_lanes": lanes}


@check("TA202")
def _x_dimension(ctx: Context, params: dict):
    if len(ctx.block_dims) > 1 and ctx.block_dims[0] % 32:
        x = ctx.block_dims[0]
        yield (f"block x-dimension {x} is not a multiple of 32, so warps straddle rows; "
               f"reshape {'x'.join(map(str, ctx.block_dims))} to put 32 or 64 threads along x"), {"block_dims": list(ctx.block_dims)}


# -- occupancy ------------------------------------------------------------------

def _launch_bounds_hint(ctx: Context, blocks: int, regs: int) -> str:
    return f"__launch_bounds__({ctx.kernel.block_size}, {blocks}) or -maxrregcount={regs}"


@check("TA301")
def _limiter(ctx: Context, params: dict):
    result = ctx.result
    if not result.launchable or result.occupancy >= 1.0:
        return
    parts, details = [], {"limiters": result.limiters, "blocks_per_sm": result.active_blocks_per_sm,
                          "occupancy": round(result.occupancy, 6), "next_steps": []}
    for limiter in result.limiters:
        if limiter == "registers":
            cliff = whatif.register_cliff(result)
            for step in cliff.down:
                details["next_steps"].append({"resource": "registers", "value": step.value,
                                              "blocks_per_sm": step.blocks_per_sm, "occupancy": round(step.occupancy, 6)})
            if cliff.down:
                step = cliff.down[0]
                parts.append(f"registers: {cliff.current} -> {step.value} gives {step.blocks_per_sm} blocks/SM, "
                             f"{_pct(result.occupancy)} -> {_pct(step.occupancy)} "
                             f"({_launch_bounds_hint(ctx, step.blocks_per_sm, step.value)})")
            else:
                parts.append(f"registers limit {result.active_blocks_per_sm} blocks/SM; fewer registers alone cannot add one")
        elif limiter == "shared_memory":
            cliff = whatif.shared_mem_cliff(result)
            carve = whatif.best_carveout(result)
            if carve is not None:
                parts.append(f"shared memory: carveout {carve.value}% gives {carve.blocks_per_sm} blocks/SM, "
                             f"{_pct(result.occupancy)} -> {_pct(carve.occupancy)} "
                             "(cudaFuncAttributePreferredSharedMemoryCarveout)")
            if cliff.down:
                step = cliff.down[0]
                shave = cliff.current - step.value
                details["next_steps"].append({"resource": "shared_memory", "value": step.value,
                                              "blocks_per_sm": step.blocks_per_sm, "occupancy": round(step.occupancy, 6)})
                parts.append(f"shared memory: {cliff.current} -> {step.value} B per block (-{shave} B) gives "
                             f"{step.blocks_per_sm} blocks/SM, {_pct(result.occupancy)} -> {_pct(step.occupancy)}")
        elif limiter in ("warps", "blocks"):
            table = whatif.block_size_table(result)
            # The smallest block that reaches the best occupancy: larger blocks add no warps per SM,
            # only coarser scheduling and a bigger tail.
            best = max(table, key=lambda s: (s.occupancy, -s.value))
            if best.occupancy > result.occupancy:
                parts.append(f"{limiter}: block size {best.value} gives {_pct(best.occupancy)}")
            else:
                parts.append(f"{limiter}: {result.active_blocks_per_sm} blocks of {result.warps_per_block} warps per SM")
        elif limiter == "barriers":
            # Advise fewer barriers only where the engine shows it alone gains a block.
            fewer = next((n for n in range(ctx.kernel.barriers - 1, -1, -1)
                          if occupancy(ctx.arch, ctx.kernel.replace(barriers=n)).active_blocks_per_sm
                          > result.active_blocks_per_sm), None)
            if fewer is not None:
                gained = occupancy(ctx.arch, ctx.kernel.replace(barriers=fewer))
                parts.append(f"barriers: {ctx.kernel.barriers} -> {fewer} per block gives {gained.active_blocks_per_sm} "
                             f"blocks/SM, {_pct(result.occupancy)} -> {_pct(gained.occupancy)}")
    yield (f"occupancy {_pct(result.occupancy)} ({result.active_warps_per_sm}/{result.max_warps_per_sm} warps) "
           f"limited by {' + '.join(result.limiters)}: " + "; ".join(parts)), details


@check("TA302")
def _low_occupancy(ctx: Context, params: dict):
    result = ctx.result
    if result.launchable and result.occupancy < params["threshold"]:
        yield (f"theoretical occupancy {_pct(result.occupancy)} is below {_pct(params['threshold'])} "
               f"of the maximum, limited by {' + '.join(result.limiters)}"), {"occupancy": round(result.occupancy, 6)}


@check("TA303")
def _few_warps(ctx: Context, params: dict):
    result = ctx.result
    warps = result.active_warps_per_sm
    if not result.launchable:
        return
    if warps < params["with_ilp"]:
        yield (f"{warps} resident warps per SM cannot hide FMA latency even with 4-way ILP "
               f"(at least {params['with_ilp']} needed)"), {"active_warps_per_sm": warps}
    elif warps < params["without_ilp"]:
        yield (f"{warps} resident warps per SM hide FMA latency only with ~{-(-params['without_ilp'] // warps)}-way "
               f"instruction-level parallelism ({params['without_ilp']} warps needed without)"), {"active_warps_per_sm": warps}


@check("TA304")
def _near_cliff(ctx: Context, params: dict):
    result = ctx.result
    if not result.launchable:
        return
    # Nothing to lose but occupancy headroom is still worth knowing at 100%: said as info there,
    # so `--fail-on warning` does not fail a kernel that is at the maximum.
    severity = "info" if result.active_warps_per_sm == result.max_warps_per_sm else None
    blocks, kernel = result.active_blocks_per_sm, ctx.kernel
    regs = whatif.register_cliff(result)  # same call as TA301's, so memoised
    if regs.headroom is not None and regs.headroom < params["register_margin"]:
        drops_at = kernel.registers + regs.headroom + 1  # the first count that loses a block
        after = occupancy(ctx.arch, kernel.replace(registers=drops_at)).active_blocks_per_sm
        yield (f"registers: {drops_at} per thread (+{drops_at - kernel.registers}) drops to {_blocks(after)} "
               f"from {_blocks(blocks)}; {_headroom(regs.headroom, 'register')} of headroom; pin the count with "
               f"__launch_bounds__({kernel.block_size}, {blocks})"), \
            {"resource": "registers", "headroom": regs.headroom, "drops_at": drops_at, "blocks_after": after}, severity
    total = kernel.static_shared_mem + kernel.dynamic_shared_mem
    if not total:
        return  # a block without shared memory has no shared-memory cliff to be near
    smem = whatif.shared_mem_cliff(result)
    if smem.headroom is not None and smem.headroom < params["shared_mem_margin"]:
        drops_at = total + smem.headroom + 1  # the first size in bytes that loses a block
        after = occupancy(ctx.arch, whatif.with_total_shared_mem(kernel, drops_at)).active_blocks_per_sm
        yield (f"shared memory: {drops_at} B per block (+{drops_at - total} B) drops to {_blocks(after)} "
               f"from {_blocks(blocks)}; {_headroom(smem.headroom, 'byte')} of headroom"), \
            {"resource": "shared_memory", "headroom": smem.headroom, "drops_at": drops_at, "blocks_after": after}, \
            severity


def _blocks(count: int) -> str:
    return f"{count} block/SM" if count == 1 else f"{count} blocks/SM"


def _headroom(count: int, unit: str) -> str:
    return f"{count} {unit}" + ("" if count == 1 else "s")


# -- shared memory and carveout -------------------------------------------------

@check("TA401")
def _carveout_rounded(ctx: Context, params: dict):
    arch, carveout = ctx.arch, ctx.kernel.carveout
    if arch.shared_mem_model != "carveout" or carveout in (CARVEOUT_DEFAULT, CARVEOUT_MAX_SHARED):
        return
    asked = carveout * arch.shared_mem_per_sm // 100
    got = align_up_shared_mem(arch, asked)
    if got != asked:
        configs = ", ".join(str(c // 1024) for c in arch.shared_mem_configs)
        yield (f"carveout {carveout}% asks for {asked} B of shared memory per SM; {arch.sm} configures {got} B "
               f"(supported: {configs} KB)"), {"requested_bytes": asked, "configured_bytes": got}


@check("TA402")
def _carveout_limits(ctx: Context, params: dict):
    best = whatif.best_carveout(ctx.result)
    if best is not None and ctx.kernel.carveout != CARVEOUT_DEFAULT:
        yield (f"carveout {ctx.kernel.carveout}% allows {ctx.result.active_blocks_per_sm} blocks/SM; "
               f"{best.value}% or more allows {best.blocks_per_sm} ({_pct(ctx.result.occupancy)} -> {_pct(best.occupancy)}): "
               f"cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, {best.value})"), \
            {"carveout": best.value, "blocks_per_sm": best.blocks_per_sm}


@check("TA403")
def _carveout_ignored(ctx: Context, params: dict):
    for note in ctx.result.notes:
        if "carveout" in note:
            yield note, {}


@check("TA404")
def _reserved_costs_block(ctx: Context, params: dict):
    arch, result = ctx.arch, ctx.result
    if not arch.reserved_shared_mem_per_block or not result.launchable or "shared_memory" not in result.limiters:
        return
    total = ctx.kernel.static_shared_mem + ctx.kernel.dynamic_shared_mem
    reserved = arch.reserved_shared_mem_per_block
    if total <= reserved:
        return
    fitting = occupancy(arch, whatif.with_total_shared_mem(ctx.kernel, total - reserved)).active_blocks_per_sm
    if fitting > result.active_blocks_per_sm:
        yield (f"the {reserved} B CUDA reserves per block pushes {total} B to {result.allocated_shared_mem_per_block} B "
               f"allocated; {total - reserved} B per block would fit "
               f"{fitting} blocks/SM instead of {result.active_blocks_per_sm}"), \
            {"reserved_bytes": reserved, "fitting_bytes": total - reserved}


@check("TA405")
def _fermi_l1(ctx: Context, params: dict):
    arch = ctx.arch
    if arch.major != 2 or not ctx.spill_stores:
        return
    total = ctx.kernel.static_shared_mem + ctx.kernel.dynamic_shared_mem
    small = arch.shared_mem_configs[0]
    if total <= small and ctx.kernel.carveout != 0:
        yield (f"{ctx.spill_stores} B of spill stores per thread and {total} B of shared memory: cudaFuncSetCacheConfig(kernel, "
               f"cudaFuncCachePreferL1) gives 48 KB of L1 for the spills and still fits the block in {small // 1024} KB"), {}


# -- registers --------------------------------------------------------------------

@check("TA501")
def _spills(ctx: Context, params: dict):
    if not ctx.spill_stores:
        return
    note = ""
    if ctx.arch.major == 7:
        note = "; spills cost less on 7.x than on Pascal: re-evaluate the occupancy/spilling balance by timing both"
    loads = f" and {ctx.spill_loads} B of spill loads" if ctx.spill_loads else ""
    yield (f"{ctx.spill_stores} B of spill stores{loads} per thread{note}",
           {"spill_stores": ctx.spill_stores, "spill_loads": ctx.spill_loads})


# -- architecture specific --------------------------------------------------------

@check("TA601")
def _turing(ctx: Context, params: dict):
    result = ctx.result
    if ctx.arch.cc == "7.5" and result.launchable and "blocks" in result.limiters and result.occupancy < 1:
        need = -(-ctx.arch.max_threads_per_sm // ctx.arch.max_blocks_per_sm)
        yield (f"Turing holds at most {ctx.arch.max_blocks_per_sm} blocks per SM: blocks of {ctx.kernel.block_size} "
               f"threads reach {_pct(result.occupancy)}; use at least {need} threads per block"), {"min_block_size": need}


@check("TA602")
def _volta_on_turing(ctx: Context, params: dict):
    if ctx.arch.cc == "7.5" and ctx.compiled_for and ctx.compiled_for.lower().startswith("sm_70"):
        # The guide's figure is about tensor-core code; other code is not said to lose anything.
        yield ("code compiled for sm_70 runs on Turing, but if it uses tensor cores (WMMA, mma.sync) it reaches "
               "only half of Turing's tensor-core peak; add -gencode arch=compute_75,code=sm_75"), {}


@check("TA603")
def _cluster_size(ctx: Context, params: dict):
    size, arch = ctx.cluster_size, ctx.arch
    if not size or size <= 1:
        return
    if arch.max_cluster_size_portable is None:
        yield f"thread-block clusters need compute capability 9.0 or later; {arch.sm} has none", {"cluster_size": size}
    elif size > (arch.max_cluster_size_nonportable or arch.max_cluster_size_portable):
        yield (f"cluster of {size} blocks exceeds {arch.sm}'s maximum of "
               f"{arch.max_cluster_size_nonportable or arch.max_cluster_size_portable}"), {"cluster_size": size}


@check("TA604")
def _cluster_nonportable(ctx: Context, params: dict):
    size, arch = ctx.cluster_size, ctx.arch
    portable, largest = arch.max_cluster_size_portable, arch.max_cluster_size_nonportable
    if size and portable and portable < size <= (largest or portable):
        yield (f"cluster of {size} blocks exceeds the portable {portable}: set "
               "cudaFuncAttributeNonPortableClusterSizeAllowed and size the launch with cudaOccupancyMaxActiveClusters"), \
            {"cluster_size": size}


# -- launch level (need a grid size and an SM count) ------------------------------

@check("TA701")
def _small_grid(ctx: Context, params: dict):
    if ctx.grid_size and ctx.sm_count and ctx.grid_size < ctx.sm_count:
        yield (f"grid of {ctx.grid_size} blocks leaves {ctx.sm_count - ctx.grid_size} of {ctx.sm_count} SMs idle"), \
            {"grid_size": ctx.grid_size, "sm_count": ctx.sm_count}


@check("TA702")
def _small_grid_barriers(ctx: Context, params: dict):
    if (ctx.grid_size and ctx.sm_count and ctx.kernel.barriers > 0
            and ctx.sm_count <= ctx.grid_size < 2 * ctx.sm_count):
        # Blocks go out breadth first: every SM gets one, then grid - sm_count SMs a second.
        single = 2 * ctx.sm_count - ctx.grid_size
        yield (f"grid of {ctx.grid_size} blocks on {ctx.sm_count} SMs leaves {single} SM{'s' if single != 1 else ''} "
               "with a single block, which idles at every __syncthreads; aim for at least "
               f"{2 * ctx.sm_count} blocks"), \
            {"grid_size": ctx.grid_size, "sm_count": ctx.sm_count, "single_block_sms": single}


def waves(result: Occupancy, grid_size: int, sm_count: int) -> dict | None:
    per_wave = result.active_blocks_per_sm * sm_count
    if not per_wave:
        return None
    full, partial = divmod(grid_size, per_wave)
    fill = partial / per_wave
    lost = (1 - fill) / (full + 1) if partial else 0.0
    return {"blocks_per_wave": per_wave, "full_waves": full, "partial_wave_blocks": partial,
            "waves": round(grid_size / per_wave, 4), "tail_share_upper_bound": round(lost, 4)}


@check("TA703")
def _tail(ctx: Context, params: dict):
    if not (ctx.grid_size and ctx.sm_count and ctx.result.launchable) or ctx.grid_size < ctx.sm_count:
        return
    w = waves(ctx.result, ctx.grid_size, ctx.sm_count)
    if w and not w["full_waves"]:
        # Less than one wave: every SM has work, it just holds fewer blocks than it could.
        blocks = ctx.result.active_blocks_per_sm
        if blocks > 1:
            yield (f"grid of {ctx.grid_size} blocks is {w['waves']} of one wave of {w['blocks_per_wave']} "
                   f"({blocks} blocks/SM x {ctx.sm_count} SMs): no SM is idle, but each runs about "
                   f"{ctx.grid_size / ctx.sm_count:.2g} of the {blocks} blocks it could hold; a larger grid "
                   "(or more work per block) fills them"), w
        return
    if w and w["partial_wave_blocks"] and w["tail_share_upper_bound"] >= params["min_share"]:
        yield (f"{w['waves']} waves of {w['blocks_per_wave']} blocks: the last holds {w['partial_wave_blocks']} blocks, "
               f"so up to {_pct(w['tail_share_upper_bound'])} of the run time may be spent with SMs idle "
               "(local upper bound, uniform block times); round the grid to a multiple of "
               f"{w['blocks_per_wave']} or make blocks smaller"), w
