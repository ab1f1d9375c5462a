"""TA2xx: the shape of the block."""

from __future__ import annotations

from ...engine.occupancy import Occupancy
from ...text import plural
from .. import rule


@rule(
    code="TA201", name="block-not-warp-multiple", severity="warning", source="pg-cc",
    summary="Block size is not a multiple of the warp size",
    explanation="""Warps are allocated whole: a block of N threads occupies ceil(N/32) warps, so the last warp runs
    with idle lanes and its registers and warp slots are paid for in full. A warning, as Nsight Compute's launch
    statistics flag it: the idle lanes are paid for on every instruction, but the kernel runs.""",
    trigger={"arch": "volta", "registers": 32, "block_size": 200},
    clean={"arch": "volta", "registers": 32, "block_size": 192},
)
def block_not_warp_multiple(result: Occupancy, params: dict):
    size, warp = result.kernel.block_size, result.arch.warp_size
    if size % warp:
        lanes = -size % warp
        below, above = size // warp * warp, -(-size // warp) * warp
        use = f"use {below} or {above}" if below else f"use {above}"
        warps = plural(-(-size // warp), "warp", grouped=False)
        yield (f"block of {plural(size, 'thread', grouped=False)} fills {warps} with "
               f"{plural(lanes, 'idle lane', grouped=False)}; {use}"), {"block_size": size, "idle_lanes": lanes}


@rule(
    code="TA202", name="block-row-splits-sectors", severity="warning", source="fermi-guide#Global Memory",
    summary="A block row of 4-byte elements does not fill whole memory sectors",
    explanation="""A warp's global accesses are served in whole units: 128-byte L1 cache lines on 2.x (global loads
    are cached in L1 there), 32-byte sectors from 3.0 on (the architecture's global_memory_sector_bytes in
    `tuneadvise specs show`). When threadIdx.x indexes consecutive 4-byte elements, a row of a multi-dimensional
    block covers x * 4 bytes; if that is not a whole number of units, each row pays for a unit it half uses. On
    Fermi that is any x below 32 (its guide asks for x a multiple of the warp size so that a warp addresses one
    cache line); from 3.0 on a row of 16 floats is 64 bytes, two full sectors, and costs nothing extra, while a row
    of 4 (16 bytes) wastes half of each sector. A warning, not an error: it assumes 4-byte elements indexed by
    threadIdx.x, which the launch alone cannot confirm; Nsight Compute's sectors-per-request metric measures it.""",
    params={"element_bytes": 4},
    trigger={"arch": "fermi", "registers": 20, "block_size": "16x16"},
    clean={"arch": "ada", "registers": 20, "block_size": "16x16"},
    needs=("block_dims",),  # set only for a block of two or three dimensions
)
def block_row_splits_sectors(result: Occupancy, params: dict):
    dims, unit = result.kernel.dims, result.arch.global_memory_sector_bytes
    row = dims[0] * params["element_bytes"] if len(dims) > 1 else 0
    if unit and row % unit:
        whole = -(-row // unit) * unit // params["element_bytes"]
        yield (f"a block row of {dims[0]} 4-byte elements is {row} B, not a whole number of {unit}-byte "
               f"{'cache lines' if unit > 32 else 'sectors'} on {result.arch.sm}; put {whole} threads along x "
               f"(reshape {'x'.join(map(str, dims))})"),\
            {"block_dims": list(dims), "row_bytes": row, "sector_bytes": unit}
