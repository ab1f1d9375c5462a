"""TA4xx: shared memory, the carveout and the L1 split."""

from __future__ import annotations

from ...engine import whatif
from ...engine.occupancy import (
    CARVEOUT_DEFAULT,
    CARVEOUT_MAX_SHARED,
    Occupancy,
    align_up_shared_mem,
)
from ...text import percent
from .. import rule
from ..wording import per_sm


@rule(
    code="TA401", name="carveout-rounded", severity="info", source="occ-h#cudaOccAlignUpShmemSizeVoltaPlus",
    summary="The carveout percentage rounds up to a supported configuration",
    explanation="""The driver maps a carveout percentage to the next supported shared-memory size: 0, 8, 16, 32, 64
    or 96 KB on 7.0; 32 or 64 KB on 7.5; 0-164 KB in steps on 8.0; up to 228 KB on 9.0 and 10.x; up to 100 KB on
    8.6, 8.9 and 12.x. The request is a hint: if a block needs more, the driver picks the smallest configuration
    that fits one block. Information: the request works, it is only rounded.""",
    trigger={"arch": "volta", "registers": 32, "block_size": 256, "carveout": 40},
    clean={"arch": "volta", "registers": 32, "block_size": 256, "carveout": 100},
    # A profiled launch's carveout stands for the configuration the driver chose, not a
    # preference the program set: there is no request to round.
    on_measured_launch=False,
)
def carveout_rounded(result: Occupancy, params: dict):
    arch, carveout = result.arch, result.kernel.carveout
    if arch.shared_mem_model != "carveout" or carveout in (CARVEOUT_DEFAULT, CARVEOUT_MAX_SHARED):
        return
    asked = carveout * arch.shared_mem_per_sm // 100
    got = align_up_shared_mem(arch, asked)
    if got != asked:
        configs = ", ".join(str(c // 1024) for c in arch.shared_mem_configs)
        yield (f"carveout {carveout}% asks for {asked} B of shared memory per SM; {arch.sm} configures {got} B "
               f"(supported: {configs} KB)"), {"requested_bytes": asked, "configured_bytes": got}


@rule(
    code="TA402", name="carveout-limits-occupancy", severity="warning", source="volta-guide#4.3.2",
    summary="The carveout preference costs resident blocks",
    explanation="""A carveout that reserves more of the unified cache for L1 leaves less shared memory for blocks.
    If shared memory limits occupancy, request a larger carveout with cudaFuncSetAttribute(kernel,
    cudaFuncAttributePreferredSharedMemoryCarveout, percent). A warning: a resident block is lost to a setting,
    which one line of host code restores.""",
    trigger={"arch": "volta", "registers": 32, "block_size": 256, "shared_mem": "12K", "carveout": 25},
    clean={"arch": "volta", "registers": 32, "block_size": 256, "shared_mem": "12K", "carveout": "max-shared"},
)
def carveout_limits_occupancy(result: Occupancy, params: dict):
    if result.kernel.carveout == CARVEOUT_DEFAULT:  # no preference set: nothing of the user's costs blocks
        return
    best = whatif.best_carveout(result)
    if best is not None:
        yield (f"carveout {result.kernel.carveout}% allows {per_sm(result.active_blocks_per_sm)}; "
               f"{best.value}% or more allows {best.blocks_per_sm} ({percent(result.occupancy)} -> {percent(best.occupancy)}): "
               f"cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, {best.value})"), \
            {"carveout": best.value, "blocks_per_sm": best.blocks_per_sm}


@rule(
    code="TA403", name="carveout-ignored", severity="info", source="fermi-guide#L1 Cache",
    summary="The carveout preference has no effect on this architecture",
    explanation="""Maxwell and Pascal have dedicated shared memory; Fermi and Kepler split L1 and shared memory
    through cudaFuncSetCacheConfig (16/48 KB, and 32/32 on Kepler), not through carveout percentages. Information:
    the call is harmless, only ineffective.""",
    trigger={"arch": "pascal", "registers": 32, "block_size": 256, "carveout": 50},
    clean={"arch": "pascal", "registers": 32, "block_size": 256},
)
def carveout_ignored(result: Occupancy, params: dict):
    for note in result.notes:
        if "carveout" in note:
            yield note, {}


@rule(
    code="TA404", name="reserved-shared-mem-costs-a-block", severity="warning", source="blackwell-guide#4.2.3",
    summary="The 1 KB reserved per block costs a resident block",
    explanation="""From 8.0 on CUDA reserves 1 KB of shared memory per block. A kernel whose tile exactly divides
    the SM's shared memory loses a block to it: size tiles for (SM shared memory / blocks) - 1 KB. A warning: a
    whole resident block is lost to the reserved kilobyte, which a slightly smaller tile avoids.""",
    trigger={"arch": "hopper", "registers": 32, "block_size": 128, "dynamic_shared_mem": "57K", "opt_in": True},
    clean={"arch": "hopper", "registers": 32, "block_size": 128, "dynamic_shared_mem": "56K", "opt_in": True},
)
def reserved_shared_mem_costs_a_block(result: Occupancy, params: dict):
    arch, kernel = result.arch, result.kernel
    if not arch.reserved_shared_mem_per_block or not result.launchable or "shared_memory" not in result.limiters:
        return
    total = kernel.static_shared_mem + kernel.dynamic_shared_mem
    reserved = arch.reserved_shared_mem_per_block
    if total <= reserved:
        return
    fitting = whatif.blocks_at_total_shared_mem(result, total - reserved)
    if fitting > result.active_blocks_per_sm:
        yield (f"the {reserved} B CUDA reserves per block pushes {total} B to {result.allocated_shared_mem_per_block} B "
               f"allocated; {total - reserved} B per block would fit "
               f"{per_sm(fitting)} instead of {result.active_blocks_per_sm}"), \
            {"reserved_bytes": reserved, "fitting_bytes": total - reserved}


@rule(
    code="TA405", name="fermi-prefer-l1-for-spills", severity="info", source="fermi-guide#L1 Cache",
    summary="Spilling kernel on Fermi: consider the 48 KB L1 configuration",
    explanation="""On Fermi local memory (and so register spills) is cached in L1, which cannot be disabled. Kernels
    that spill heavily can benefit from the 48 KB L1 / 16 KB shared configuration (cudaFuncCachePreferL1), if their
    shared memory fits in 16 KB. Information: a configuration to try by timing, on an architecture few still run.""",
    trigger={"arch": "fermi", "registers": 63, "block_size": 256, "spill_stores": 64},
    clean={"arch": "fermi", "registers": 63, "block_size": 256, "shared_mem": "20K", "spill_stores": 64},
    needs=("spill_stores",),
)
def fermi_prefer_l1_for_spills(result: Occupancy, params: dict):
    arch, kernel = result.arch, result.kernel
    if arch.family != "fermi" or not kernel.spill_stores:
        return
    total = kernel.static_shared_mem + kernel.dynamic_shared_mem
    small = arch.shared_mem_configs[0]
    if total <= small and kernel.carveout != 0:
        yield (f"{kernel.spill_stores} B of spill stores per thread and {total} B of shared memory: "
               "cudaFuncSetCacheConfig(kernel, cudaFuncCachePreferL1) gives 48 KB of L1 for the spills and still "
               f"fits the block in {small // 1024} KB"), {}


