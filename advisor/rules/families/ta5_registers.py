"""TA5xx: registers and spills."""

from __future__ import annotations

from ...engine.occupancy import Occupancy
from .. import rule
from ..wording import named_lines


def _spill_lines(sass):
    from ...readers.sass import lines_by_bytes  # the machine-code reader: only where a listing was read

    lines = lines_by_bytes(sass.spill_sites)
    return (f"spills at {named_lines(lines)}", {"spill_lines": lines}) if lines else None


def _local_lines(sass):
    from ...readers.sass import lines_by_bytes

    lines = lines_by_bytes(sass.local_accesses)
    return (f"local memory accessed at {named_lines(lines)}", {"local_lines": lines}) if lines else None


@rule(
    code="TA501", name="register-spills", severity="warning", source="volta-guide#4.3.2",
    summary="The kernel spills registers to local memory",
    explanation="""Spill stores and loads go through the L1 cache to local memory. On Volta and Turing the cost of
    spills is lower than on Pascal, and the balance between occupancy and spilling should be re-evaluated: a cap
    that raises occupancy but adds spills may be slower, and vice versa. Compare -maxrregcount / __launch_bounds__
    settings by timing. A warning: spills cost memory traffic but are sometimes the right trade for occupancy;
    budgets (TA902) make them an error where a team wants that.""",
    trigger={"arch": "volta", "registers": 32, "block_size": 256, "spill_stores": 128},
    clean={"arch": "volta", "registers": 32, "block_size": 256, "spill_stores": 0},
    machine_code=_spill_lines,  # the lines that spill, most bytes first
    related=("spill_lines", "spills here"),
    needs=("spill_stores",),
)
def register_spills(result: Occupancy, params: dict):
    kernel = result.kernel
    if not kernel.spill_stores:
        return
    note = ""
    if result.arch.family in ("volta", "turing"):  # the guide's 7.x
        note = "; spills cost less on 7.x than on Pascal: re-evaluate the occupancy/spilling balance by timing both"
    loads = f" and {kernel.spill_loads} B of spill loads" if kernel.spill_loads else ""
    yield (f"{kernel.spill_stores} B of spill stores{loads} per thread{note}",
           {"spill_stores": kernel.spill_stores, "spill_loads": kernel.spill_loads})


@rule(
    code="TA502", name="local-memory-arrays", severity="warning", source="pg#device-memory-accesses",
    summary="The kernel keeps data in local memory without spilling (a stack frame beyond its spills)",
    explanation="""ptxas's "N bytes stack frame" is the kernel's local memory per thread; its spill stores account
    for part of it, and the rest is data the compiler placed in local memory: arrays indexed with values it cannot
    resolve at compile time, large structures, or the frames of calls it did not inline. Local memory is private to
    a thread but lives in device memory: it is cached in L1 and L2, and an access that misses costs as much as a
    global one, per thread, so a warp reads 32 times the frame. Index such arrays with compile-time constants (fully
    unrolled loops keep them in registers), shrink them, or share them through shared memory; `-Xptxas -v` shows the
    frame after each change. A warning at 64 bytes or more of it: smaller frames are typical of calls and printf's
    argument buffer, and cost little; only a profile (Nsight Compute's local load/store traffic) tells how often the
    frame is touched, so it is not an error. Where nvdisasm reads the kernel's machine code, the message names the
    source lines of the local loads and stores that are not spills (the array's), most bytes first.""",
    params={"min_local_bytes": 64},
    trigger={"arch": "hopper", "registers": 70, "block_size": 256, "stack_frame": 256},
    clean={"arch": "hopper", "registers": 70, "block_size": 256, "stack_frame": 256, "spill_stores": 256},
    machine_code=_local_lines,  # the lines of the local loads and stores that are not spills (the array's)
    related=("local_lines", "local memory accessed here"),
    needs=("stack_frame",),
)
def local_memory_arrays(result: Occupancy, params: dict):
    kernel = result.kernel
    local = (kernel.stack_frame or 0) - (kernel.spill_stores or 0)
    if local < params["min_local_bytes"]:
        return
    resident = result.active_blocks_per_sm * kernel.block_size
    per_sm = local * resident
    yield (f"{local} B per thread of local memory beyond spills ({kernel.stack_frame} B stack frame); "
           f"{resident} resident threads hold {per_sm // 1024} KiB per SM, cached in L1/L2 and as slow as global "
           "memory on a miss: index local arrays with compile-time constants (unroll) or use shared memory",
           {"local_bytes": local, "stack_frame": kernel.stack_frame, "spill_stores": kernel.spill_stores or 0,
            "local_bytes_per_sm": per_sm})
