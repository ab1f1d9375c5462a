"""TA7xx: the launch as a whole. These need the grid size (from the launch) and
the SM count (the launch's, else the product's), so they take a LaunchContext."""

from __future__ import annotations

from ...engine.occupancy import Occupancy, grid_waves
from ...text import percent, plural
from .. import LaunchContext, rule
from ..wording import per_sm


@rule(
    code="TA701", name="grid-smaller-than-sms", severity="warning", source="fermi-guide#Device Utilization",
    summary="Fewer blocks than SMs: part of the GPU idles",
    explanation="""A grid with fewer blocks than the device has SMs leaves SMs without work for the whole kernel.
    Raise the block count (smaller blocks, more work items) or run independent kernels concurrently in streams. A
    warning, as Nsight Compute's launch statistics flag a grid smaller than the SM count.""",
    trigger={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 100},
    clean={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 1056},
)
def grid_smaller_than_sms(launch: LaunchContext, params: dict):
    grid, sms = launch.result.kernel.grid_size, launch.sm_count
    if grid and sms and grid < sms:
        yield f"grid of {plural(grid, 'block', grouped=False)} leaves {sms - grid} of {sms} SMs idle", {"grid_size": grid, "sm_count": sms}


@rule(
    code="TA702", name="grid-small-with-barriers", severity="info", source="bpg",
    summary="Fewer than two blocks per SM for a kernel with barriers",
    explanation="""While one block waits at __syncthreads, a second resident block can issue. With fewer blocks than
    twice the SM count, some SMs hold a single block and idle at every barrier. Information: Nsight Compute notes
    grids under two blocks per SM; the cost depends on how long blocks wait at barriers.""",
    trigger={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 200, "barriers": 1},
    clean={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 200, "barriers": 0},
)
def grid_small_with_barriers(launch: LaunchContext, params: dict):
    kernel, sms = launch.result.kernel, launch.sm_count
    grid = kernel.grid_size
    if grid and sms and kernel.barriers > 0 and sms <= grid < 2 * sms:
        # Blocks go out breadth first: every SM gets one, then grid - sm_count SMs a second.
        single = 2 * sms - grid
        yield (f"grid of {grid} blocks on {sms} SMs leaves {plural(single, 'SM', grouped=False)} with a single block, which idles "
               f"at every __syncthreads; aim for at least {2 * sms} blocks"), \
            {"grid_size": grid, "sm_count": sms, "single_block_sms": single}


def waves(result: Occupancy, grid_size: int, sm_count: int) -> dict | None:
    """The grid in waves of (blocks per SM x SMs) blocks; None when no block is resident."""
    per_wave = result.active_blocks_per_sm * sm_count
    if not per_wave:
        return None
    full, partial = divmod(grid_size, per_wave)
    fill = partial / per_wave
    lost = (1 - fill) / (full + 1) if partial else 0.0
    return {"blocks_per_wave": per_wave, "full_waves": full, "partial_wave_blocks": partial,
            "waves": round(grid_waves(result, grid_size, sm_count), 4), "tail_share_upper_bound": round(lost, 4)}


@rule(
    code="TA703", name="tail-effect", severity="warning", source="bpg",
    summary="The last wave of blocks is partial",
    explanation="""A grid runs in waves of (blocks per SM x SMs) blocks. When the last wave is only partly full, the
    SMs without blocks idle until it ends. The upper bound assumes blocks of uniform duration: with W full waves and
    a partial one, the partial wave may cost up to 1/(W+1) of the run time. A warning when the partial wave may cost
    5% or more of the run time (the upper bound 1/(W+1), Nsight Compute's tail-effect estimate); below that it is
    noise.""",
    params={"min_share": 0.05},
    trigger={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 1200},
    clean={"arch": "h100-sxm", "registers": 32, "block_size": 256, "grid_size": 1056},
)
def tail_effect(launch: LaunchContext, params: dict):
    result, sms = launch.result, launch.sm_count
    grid = result.kernel.grid_size
    if not (grid and sms and result.launchable) or grid < sms:
        return
    w = waves(result, grid, sms)
    if w and not w["full_waves"]:
        # Less than one wave: every SM has work, it just holds fewer blocks than it could.
        blocks = result.active_blocks_per_sm
        if blocks > 1:
            yield (f"grid of {grid} blocks is {w['waves']} of one wave of {w['blocks_per_wave']} "
                   f"({per_sm(blocks)} x {sms} SMs): no SM is idle, but each runs about "
                   f"{grid / sms:.2g} of the {blocks} blocks it could hold; a larger grid "
                   "(or more work per block) fills them"), w
        return
    if w and w["partial_wave_blocks"] and w["tail_share_upper_bound"] >= params["min_share"]:
        yield (f"{w['waves']} waves of {w['blocks_per_wave']} blocks: the last holds "
               f"{plural(w['partial_wave_blocks'], 'block', grouped=False)}, "
               f"so up to {percent(w['tail_share_upper_bound'])} of the run time may be spent with SMs idle "
               "(local upper bound, uniform block times); round the grid to a multiple of "
               f"{w['blocks_per_wave']} or make blocks smaller"), w
