"""TA2xx: the shape of the block."""

from __future__ import annotations

from ...engine.occupancy import Occupancy
from ...text import plural
from .. import rule


@rule(
    code="TA201", name="block-not-warp-multiple", severity="warning", source="pg-cc",
    summary="Block size is not a multiple of the warp size",
    explanation="""Warps are allocated whole: a block of N threads occupies ceil(N/32) warps, so the last warp
    runs with idle lanes and its registers and warp slots are paid for in full.""",
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
    code="TA202", name="block-x-not-warp-multiple", severity="warning", source="fermi-guide#Global Memory",
    summary="Block x-dimension is not a multiple of 32",
    explanation="""Global memory accesses are processed per warp from 2.0 on. For multi-dimensional blocks the
    x-dimension should be a multiple of the warp size, not of half of it, so that each warp addresses whole cache
    lines.""",
    trigger={"arch": "fermi", "registers": 20, "block_size": "16x16"},
    clean={"arch": "fermi", "registers": 20, "block_size": "32x8"},
)
def block_x_not_warp_multiple(result: Occupancy, params: dict):
    dims = result.kernel.dims
    if len(dims) > 1 and dims[0] % 32:
        yield (f"block x-dimension {dims[0]} is not a multiple of 32, so warps straddle rows; "
               f"reshape {'x'.join(map(str, dims))} to put 32 or 64 threads along x"), {"block_dims": list(dims)}
