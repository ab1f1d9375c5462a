"""TA1xx: launches that fail. One rule per launch error the engine names: the
engine decides (`Occupancy.errors`); the rule gives it a code, a severity and
an explanation."""

from __future__ import annotations

from ...engine.occupancy import Occupancy
from .. import NEEDS_ERRORS, rule


def _engine_error(error_code: str):
    """A check that reports the engine's launch error `error_code`, in the engine's words."""
    def check(result: Occupancy, params: dict):
        for error in result.errors:
            if error.code == error_code:
                yield error.message, {"field": error.field}

    return check


TA102 = rule(
    code="TA102", name="launch-bounds-exceeded", severity="error", source="pg-cc",
    summary="The block is larger than the kernel's __launch_bounds__ maximum",
    explanation="""A kernel compiled with __launch_bounds__(N) may use registers on the assumption that no block
    exceeds N threads; the launch of a larger block fails with cudaErrorLaunchOutOfResources. An error: the launch
    fails, every time.""",
    trigger={"arch": "volta", "registers": 32, "block_size": 512, "max_threads_per_block": 256},
    clean={"arch": "volta", "registers": 32, "block_size": 256, "max_threads_per_block": 256},
    needs=(NEEDS_ERRORS,),
)(_engine_error("launch-bounds"))

TA103 = rule(
    code="TA103", name="registers-per-thread", severity="error", source="pg-cc",
    summary="More registers per thread than the architecture encodes",
    explanation="""Compute capabilities 2.x and 3.0 encode at most 63 registers per thread, the later ones 255. Cap
    the kernel with -maxrregcount or __launch_bounds__ when building for these targets. An error: ptxas cannot build
    the kernel for these targets as it stands.""",
    trigger={"arch": "fermi", "registers": 64, "block_size": 128},
    clean={"arch": "fermi", "registers": 63, "block_size": 128},
    needs=(NEEDS_ERRORS,),
)(_engine_error("registers-per-thread"))

TA104 = rule(
    code="TA104", name="registers-per-block", severity="error", source="occ-h#cudaOccMaxBlocksPerSMRegsLimit",
    summary="Registers x threads exceed the per-block register file",
    explanation="""Registers are allocated per warp in units of the allocation unit (256 from 3.0 on, 64 on Fermi),
    and the hardware's launch check rounds the warp count up to the number of SM sub-partitions. A block whose
    allocation exceeds the per-block limit (32K on 2.x, 5.3 and 6.2; 64K elsewhere) cannot launch. Lower the block
    size or cap registers with __launch_bounds__(threads) / -maxrregcount. An error: the launch fails with
    cudaErrorLaunchOutOfResources.""",
    trigger={"arch": "tegra-x1", "registers": 128, "block_size": 512},
    clean={"arch": "tegra-x1", "registers": 64, "block_size": 512},
    needs=(NEEDS_ERRORS,),
)(_engine_error("registers-per-block"))

TA105 = rule(
    code="TA105", name="static-shared-mem-over-48k", severity="error", source="volta-guide#4.3.2",
    summary="Static shared memory over 48 KB",
    explanation="""Static (__shared__ array) allocations are limited to 48 KB on every architecture, to keep
    binaries compatible; ptxas refuses more. Larger tiles must use dynamic shared memory (extern __shared__) with
    the opt-in attribute cudaFuncAttributeMaxDynamicSharedMemorySize. An error: the build fails.""",
    trigger={"arch": "ampere", "registers": 32, "block_size": 256, "shared_mem": "64K"},
    clean={"arch": "ampere", "registers": 32, "block_size": 256, "shared_mem": "48K"},
    needs=(NEEDS_ERRORS,),
)(_engine_error("static-shared-mem"))

TA106 = rule(
    code="TA106", name="dynamic-shared-mem-needs-opt-in", severity="error", source="volta-guide#4.3.2",
    summary="Shared memory over 48 KB per block without the opt-in attribute",
    explanation="""From 7.0 on a block may use more than 48 KB of shared memory, but only dynamic shared memory and
    only after cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes). Without it the
    launch fails, and the occupancy API silently answers 0 blocks. An error: the launch fails.""",
    trigger={"arch": "volta", "registers": 32, "block_size": 256, "dynamic_shared_mem": "64K"},
    clean={"arch": "volta", "registers": 32, "block_size": 256, "dynamic_shared_mem": "64K", "opt_in": True},
    needs=(NEEDS_ERRORS,),
)(_engine_error("opt-in-required"))

TA107 = rule(
    code="TA107", name="shared-mem-per-block", severity="error", source="pg-cc",
    summary="Shared memory per block over the architecture's maximum",
    explanation="""The largest block allocation is 48 KB before 7.0 and the opt-in maximum after (96 KB on 7.0, 64
    KB on 7.5, 163 KB on 8.0, 99 KB on 8.6/8.9/12.x, 227 KB on 9.0/10.x). From 8.0 on 1 KB more per block is
    reserved by CUDA on top of this. An error: no setting lets the launch succeed.""",
    trigger={"arch": "turing", "registers": 32, "block_size": 256, "dynamic_shared_mem": "80K", "opt_in": True},
    clean={"arch": "turing", "registers": 32, "block_size": 256, "dynamic_shared_mem": "64K", "opt_in": True},
    needs=(NEEDS_ERRORS,),
)(_engine_error("shared-mem-per-block"))

TA108 = rule(
    code="TA108", name="virtual-resources", severity="error", source="occ-h#cudaOccMaxBlocksPerSMVirtualResource",
    summary="More virtual resources per block than an SM has",
    explanation="""CUDA 13's occupancy calculator adds a sixth limit: a kernel's virtual-resource count
    (cudaOccFuncAttributes.virtualResourceCount) against 128 per SM on compute capability 10.x, 11.x and 12.x, so at
    most 128 / count blocks reside per SM; a count of 0 does not limit, and a count over 128 leaves no block
    resident. No compiler output (ptxas, cuobjdump) reports the count today: give it with --virtual-resources (batch
    and lint configs: "virtual_resources") when you know it. The calculators of CUDA 12 have no such limit (--cuda
    12.9, for one). An error: the occupancy calculator answers 0 blocks and the launch cannot be resident.""",
    trigger={"arch": "blackwell", "registers": 32, "block_size": 128, "virtual_resources": 129},
    clean={"arch": "blackwell", "registers": 32, "block_size": 128, "virtual_resources": 128},
    needs=(NEEDS_ERRORS,),
)(_engine_error("virtual-resources"))
